import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ErrorIssueDto } from '../../common/errors/error-response.dto.js';
import { JSON_VALUE_SCHEMA } from '../../common/http/json-value.schema.js';
import { AuthorizationNeededDto } from './tool.dto.js';

export const BATCH_STATUSES = [
  'ok',
  'error',
  'timeout',
  'invalid_arguments',
  'denied',
  'rate_limited',
  'unavailable',
  'pending_approval',
  'authorization_required',
] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

class BatchCallDto {
  @ApiProperty({ example: 'c1', description: 'Your id for the call (1-128 characters, unique in the batch), echoed back' }) id!: string;
  @ApiProperty({ example: 'read_file' }) tool!: string;
  @ApiProperty({
    oneOf: [{ type: 'object', additionalProperties: true }, { type: 'string' }],
    description: 'The arguments the model wrote: an object, or a JSON string as OpenAI delivers it',
    example: { path: 'README.md' },
  })
  arguments!: Record<string, unknown> | string;
  @ApiPropertyOptional({ minimum: 1, description: "Give up after this long (capped by the tool's own timeout)" }) timeoutMs?: number;
  @ApiPropertyOptional({
    maxLength: 255,
    description:
      'Idempotency key of this call (1-255 visible ASCII): a repeat with the same key and call returns the stored result, marked replayed',
  })
  idempotencyKey?: string;
}

export class BatchBodyDto {
  @ApiProperty({ type: [BatchCallDto], minItems: 1, maxItems: 32 }) calls!: BatchCallDto[];
}

class BatchErrorDto {
  @ApiProperty({ example: 'invalid_arguments' }) code!: string;
  @ApiProperty() message!: string;
  @ApiProperty({ description: 'Trying the same call again may work' }) retryable!: boolean;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) details?: Record<string, unknown>;
  @ApiPropertyOptional({ description: 'invalid_arguments: the tool whose arguments were refused' }) tool?: string;
  @ApiPropertyOptional({ type: [ErrorIssueDto], description: 'invalid_arguments: every failing value and why' }) issues?: ErrorIssueDto[];
  @ApiPropertyOptional({ description: "invalid_arguments: the tool's usage line" }) usage?: string;
}

export class BatchResultDto {
  @ApiProperty({ example: 'c1' }) id!: string;
  @ApiProperty({ example: 'read_file' }) tool!: string;
  @ApiProperty({
    enum: BATCH_STATUSES,
    description:
      'ok, error, timeout: the tool ran. invalid_arguments, denied, rate_limited, unavailable: refused before running (never ran). pending_approval: parked until a person approves it. authorization_required: the end user must connect first (authorization)',
  })
  status!: BatchStatus;
  @ApiPropertyOptional({ ...JSON_VALUE_SCHEMA, description: "The tool's result when status is ok" }) result?: unknown;
  @ApiPropertyOptional({
    type: BatchErrorDto,
    description: 'Why the call failed or was refused; the same code and message as a single invoke',
  })
  error?: BatchErrorDto;
  @ApiPropertyOptional({ format: 'uuid', description: 'The audit row of a call that ran or was parked' }) invocationId?: string;
  @ApiPropertyOptional() durationMs?: number;
  @ApiPropertyOptional({ format: 'date-time', description: 'When a parked call expires unless decided' }) expiresAt?: string;
  @ApiPropertyOptional({ type: AuthorizationNeededDto, description: 'authorization_required: where the end user connects' })
  authorization?: AuthorizationNeededDto;
  @ApiPropertyOptional({ description: 'true: the stored answer of an earlier call with this idempotencyKey; the tool did not run again' })
  replayed?: boolean;
}

export class BatchResponseDto {
  @ApiProperty({ type: [BatchResultDto], description: 'One result per call, in the order of the request' }) results!: BatchResultDto[];
}
