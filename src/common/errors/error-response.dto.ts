import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class ErrorDetailDto {
  @ApiProperty({ example: 'project_not_found', description: 'Stable, machine-readable error code' })
  code!: string;

  @ApiProperty({ example: "No project with id '0b6c…'", description: 'What went wrong, for a person or a model' })
  message!: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  details?: Record<string, unknown>;
}

export class ErrorResponseDto {
  @ApiProperty({ type: ErrorDetailDto })
  error!: ErrorDetailDto;

  @ApiProperty({ example: '5f2b6c9e-1d2a-4c1e-9a43-3a0f6a1b2c3d', description: 'Also sent as the x-request-id header' })
  requestId!: string;
}
