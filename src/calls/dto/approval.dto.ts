import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';

export class DecisionBodyDto {
  @ApiPropertyOptional({
    maxLength: 1000,
    example: 'Checked the path with the requester',
    description: 'Kept with the decision; a denial tells the caller why',
  })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  reason?: string;
}

export class ApproveBodyDto extends DecisionBodyDto {
  @ApiPropertyOptional({
    pattern: '^[0-9a-f]{64}$',
    description:
      'The argumentsDigest the approver saw (GET .../invocations/{id}, or the approval.requested event): the call runs only if its arguments still have it, else 409 approval_arguments_changed and nothing runs',
  })
  @IsOptional()
  @Matches(/^[0-9a-f]{64}$/, { message: 'argumentsDigest must be 64 lower-case hex digits (SHA-256)' })
  argumentsDigest?: string;
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
    description:
      'What the call answered: for an approved call the outcome of its run (status ok, error, timeout, or a refusal), for a denied one status denied',
  })
  outcome!: Record<string, unknown>;
}
