import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { TOOL_FORMATS, type ToolFormat } from '../tool-formats.js';

export class ToolFormatQueryDto {
  @ApiPropertyOptional({ enum: TOOL_FORMATS, default: 'native', description: "Answer each tool in this provider's shape" })
  @IsOptional()
  @IsIn(TOOL_FORMATS)
  format?: ToolFormat;
}

class ToolAnnotationsDto {
  @ApiProperty() readOnly!: boolean;
  @ApiProperty() destructive!: boolean;
  @ApiProperty() idempotent!: boolean;
  @ApiProperty() openWorld!: boolean;
}

export class ToolDto {
  @ApiProperty({ example: 'read_file' }) name!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'JSON Schema of the arguments' })
  inputSchema!: Record<string, unknown>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) outputSchema?: Record<string, unknown>;
  @ApiProperty({ type: ToolAnnotationsDto }) annotations!: ToolAnnotationsDto;
  @ApiProperty({ description: 'Longest a call may run' }) timeoutMs!: number;
  @ApiProperty({ example: 'builtin', description: 'builtin, or skill:<name>@<version>' }) source!: string;
}

export class ToolListResponseDto {
  @ApiProperty({
    type: 'array',
    items: { type: 'object' },
    description:
      'native: ToolDto; openai: {type:"function", function:{name, description, parameters, strict}}; anthropic: {name, description, input_schema}; mcp: {name, description, inputSchema, annotations}',
  })
  tools!: Record<string, unknown>[];
}

export class InvokeToolBodyDto {
  @ApiProperty({
    oneOf: [{ type: 'object', additionalProperties: true }, { type: 'string' }],
    description: 'The arguments the model wrote: an object, or a JSON string as OpenAI delivers it',
    example: { path: 'README.md' },
  })
  arguments!: Record<string, unknown> | string;

  @ApiPropertyOptional({ description: "Give up after this long (capped by the tool's own timeout)", minimum: 1 })
  timeoutMs?: number;
}

class InvocationErrorDto {
  @ApiProperty({ example: 'not_found' }) code!: string;
  @ApiProperty() message!: string;
  @ApiProperty({ description: 'Trying the same call again may work' }) retryable!: boolean;
}

export class InvocationResultDto {
  @ApiProperty({ format: 'uuid' }) invocationId!: string;
  @ApiProperty() tool!: string;
  @ApiProperty({ enum: ['ok', 'error', 'timeout'] }) status!: 'ok' | 'error' | 'timeout';
  @ApiPropertyOptional({ description: "The tool's result when status is ok" }) result?: unknown;
  @ApiPropertyOptional({ type: InvocationErrorDto }) error?: InvocationErrorDto;
  @ApiProperty() durationMs!: number;
}

class ArgumentIssueDto {
  @ApiProperty({ example: '/path' }) path!: string;
  @ApiProperty({ example: 'type' }) keyword!: string;
  @ApiProperty({ example: '/path must be string, got number' }) message!: string;
  @ApiPropertyOptional() expected?: string;
  @ApiPropertyOptional() received?: string;
}

class InvalidArgumentsErrorDto {
  @ApiProperty({ example: 'invalid_arguments' }) code!: string;
  @ApiProperty({ description: 'Every failing parameter and why, then the usage line; written for the model' })
  message!: string;
  @ApiProperty({ example: 'read_file' }) tool!: string;
  @ApiProperty({ type: [ArgumentIssueDto] }) issues!: ArgumentIssueDto[];
  @ApiProperty({ example: 'read_file(path: string, offset?: integer, limit?: integer)' }) usage!: string;
}

export class InvalidArgumentsResponseDto {
  @ApiProperty({ type: InvalidArgumentsErrorDto }) error!: InvalidArgumentsErrorDto;
  @ApiProperty() requestId!: string;
}

// A call the project requires a person to approve: validated, audited as pending_approval, not run.
export class PendingApprovalDto {
  @ApiProperty({ format: 'uuid', description: 'Approve or deny it at POST .../invocations/{invocationId}/approve or /deny' }) invocationId!: string;
  @ApiProperty() tool!: string;
  @ApiProperty({ enum: ['pending_approval'] }) status!: 'pending_approval';
  @ApiProperty({ format: 'date-time', description: 'Not decided by then, it expires and never runs' }) expiresAt!: string;
}
