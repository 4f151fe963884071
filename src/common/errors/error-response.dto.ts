import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class ErrorIssueDto {
  @ApiProperty({ example: '/path', description: 'JSON Pointer of the failing value' }) path!: string;
  @ApiProperty({ example: 'type', description: 'The JSON Schema keyword it failed' }) keyword!: string;
  @ApiProperty({ example: '/path must be string, got number' }) message!: string;
  @ApiPropertyOptional() expected?: string;
  @ApiPropertyOptional() received?: string;
}

export class ErrorDetailDto {
  @ApiProperty({ example: 'project_not_found', description: 'Stable, machine-readable error code' })
  code!: string;

  @ApiProperty({ example: "No project with id '0b6c…'", description: 'What went wrong, for a person or a model' })
  message!: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  details?: Record<string, unknown>;

  // The fields below are set by invalid_arguments (all three) and invalid_skill (issues): one error shape
  // with optional parts, so a client reads every refusal the same way.
  @ApiPropertyOptional({ example: 'read_file', description: 'invalid_arguments: the tool whose arguments were refused' })
  tool?: string;

  @ApiPropertyOptional({ type: [ErrorIssueDto], description: 'invalid_arguments, invalid_skill: every failing value and why' })
  issues?: ErrorIssueDto[];

  @ApiPropertyOptional({
    example: 'read_file(path: string, offset?: integer, limit?: integer)',
    description: "invalid_arguments: the tool's usage line",
  })
  usage?: string;
}

export class ErrorResponseDto {
  @ApiProperty({ type: ErrorDetailDto })
  error!: ErrorDetailDto;

  @ApiProperty({ example: '5f2b6c9e-1d2a-4c1e-9a43-3a0f6a1b2c3d', description: 'Also sent as the x-request-id header' })
  requestId!: string;
}
