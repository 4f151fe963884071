import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';

export class DecisionBodyDto {
  @ApiPropertyOptional({ maxLength: 1000, example: 'Checked the path with the requester', description: 'Kept with the decision; a denial tells the caller why' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  reason?: string;
}

export class DecidedByDto {
  @ApiProperty({ format: 'uuid', description: 'The API key that decided' }) keyId!: string;
  @ApiProperty({ description: "That key's name" }) name!: string;
}

export class DecisionResponseDto {
  @ApiProperty({ format: 'uuid' }) invocationId!: string;
  @ApiProperty({ enum: ['approved', 'denied'] }) decision!: 'approved' | 'denied';
  @ApiProperty({ type: DecidedByDto, description: 'Who decided' }) decidedBy!: DecidedByDto;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'What the call answered: for an approved call the outcome of its run (status ok, error, timeout, or a refusal), for a denied one status denied',
  })
  outcome!: Record<string, unknown>;
}
