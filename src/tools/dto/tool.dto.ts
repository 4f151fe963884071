import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional } from 'class-validator';
import { JSON_VALUE_SCHEMA } from '../../common/http/json-value.schema.js';
import { TOOL_FORMATS, type ToolFormat } from '../tool-formats.js';
import type { InputRequiredAnswer } from '../../execution/input-required.js';

export class ToolFormatQueryDto {
  @ApiPropertyOptional({ enum: TOOL_FORMATS, default: 'native', description: "Answer each tool in this provider's shape" })
  @IsOptional()
  @IsIn(TOOL_FORMATS)
  format?: ToolFormat;

  @ApiPropertyOptional({
    default: false,
    description:
      "format=openai or openai-responses: each tool's parameters rewritten for OpenAI's strict mode where they can be (every property required, optional ones nullable, constraints said in the description, free-form maps as lists of {name, value}); calls are still validated against the full schema",
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) =>
    value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value,
  )
  @IsBoolean()
  strict?: boolean;
}

class ToolAnnotationsDto {
  @ApiProperty() readOnly!: boolean;
  @ApiProperty() destructive!: boolean;
  @ApiProperty() idempotent!: boolean;
  @ApiProperty() openWorld!: boolean;
}

export class ToolDto {
  @ApiProperty({ example: 'read_file' }) name!: string;
  @ApiPropertyOptional({ example: 'Read a file', description: 'A display name for people' }) title?: string;
  @ApiProperty() description!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'JSON Schema of the arguments' })
  inputSchema!: Record<string, unknown>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) outputSchema?: Record<string, unknown>;
  @ApiProperty({ type: ToolAnnotationsDto }) annotations!: ToolAnnotationsDto;
  @ApiProperty({ description: 'Longest a call may run' }) timeoutMs!: number;
  @ApiProperty({ example: 'builtin', description: 'builtin, or skill:<name>@<version>' }) source!: string;
}

class OpenAiFunctionDto {
  @ApiProperty({ example: 'read_file' }) name!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'JSON Schema of the arguments' })
  parameters!: Record<string, unknown>;
  @ApiProperty({ description: "true when the schema fits OpenAI's strict mode" }) strict!: boolean;
}

// format=openai: a Chat Completions function tool (openai's ChatCompletionFunctionTool).
export class OpenAiToolDto {
  @ApiProperty({ enum: ['function'] }) type!: 'function';
  @ApiProperty({ type: OpenAiFunctionDto }) function!: OpenAiFunctionDto;
}

// format=openai-responses: a Responses API function tool (openai's FunctionTool), flat.
export class OpenAiResponsesToolDto {
  @ApiProperty({ enum: ['function'] }) type!: 'function';
  @ApiProperty({ example: 'read_file' }) name!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'JSON Schema of the arguments' })
  parameters!: Record<string, unknown>;
  @ApiProperty({ description: "true when the schema fits OpenAI's strict mode" }) strict!: boolean;
}

// format=anthropic: a Messages API tool (@anthropic-ai/sdk's Tool); its input schema always has type "object".
export class AnthropicToolDto {
  @ApiProperty({ example: 'read_file' }) name!: string;
  @ApiProperty() description!: string;
  // One branch, so that the property itself stays required (an inline `required` list would replace that).
  @ApiProperty({
    oneOf: [
      {
        type: 'object',
        properties: {
          type: { type: 'string', enum: ['object'] },
          properties: { type: 'object', additionalProperties: true },
          required: { type: 'array', items: { type: 'string' } },
        },
        required: ['type'],
        additionalProperties: true,
      },
    ],
    description: 'JSON Schema of the arguments; its type is always "object"',
  })
  input_schema!: { type: 'object'; properties?: Record<string, unknown>; required?: string[]; [key: string]: unknown };
}

class McpToolAnnotationsDto {
  @ApiProperty() readOnlyHint!: boolean;
  @ApiProperty() destructiveHint!: boolean;
  @ApiProperty() idempotentHint!: boolean;
  @ApiProperty() openWorldHint!: boolean;
}

// format=mcp: a tool as MCP's tools/list answers it.
export class McpToolDto {
  @ApiProperty({ example: 'read_file' }) name!: string;
  @ApiPropertyOptional({ example: 'Read a file' }) title?: string;
  @ApiProperty() description!: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) inputSchema!: Record<string, unknown>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) outputSchema?: Record<string, unknown>;
  @ApiProperty({ type: McpToolAnnotationsDto }) annotations!: McpToolAnnotationsDto;
}

export const TOOL_FORMAT_MODELS = [ToolDto, OpenAiToolDto, OpenAiResponsesToolDto, AnthropicToolDto, McpToolDto];
const ref = (model: { name: string }) => ({ $ref: `#/components/schemas/${model.name}` });
// anyOf, not oneOf: the shapes overlap (a native tool has every field an anthropic one has but input_schema).
export const ANY_TOOL_SCHEMA = { anyOf: TOOL_FORMAT_MODELS.map(ref) };

// The listing says which format it is in (`format`), so a typed client narrows `tools` by it: one schema
// per format, told apart by that field (a discriminated union openapi-typescript writes as a TS union).
export class NativeToolListDto {
  @ApiProperty({ enum: ['native'] }) format!: 'native';
  @ApiProperty({ type: [ToolDto] }) tools!: ToolDto[];
}
export class OpenAiToolListDto {
  @ApiProperty({ enum: ['openai'] }) format!: 'openai';
  @ApiProperty({ type: [OpenAiToolDto] }) tools!: OpenAiToolDto[];
}
export class OpenAiResponsesToolListDto {
  @ApiProperty({ enum: ['openai-responses'] }) format!: 'openai-responses';
  @ApiProperty({ type: [OpenAiResponsesToolDto] }) tools!: OpenAiResponsesToolDto[];
}
export class AnthropicToolListDto {
  @ApiProperty({ enum: ['anthropic'] }) format!: 'anthropic';
  @ApiProperty({ type: [AnthropicToolDto] }) tools!: AnthropicToolDto[];
}
export class McpToolListDto {
  @ApiProperty({ enum: ['mcp'] }) format!: 'mcp';
  @ApiProperty({ type: [McpToolDto] }) tools!: McpToolDto[];
}

const LISTS = {
  native: NativeToolListDto,
  openai: OpenAiToolListDto,
  'openai-responses': OpenAiResponsesToolListDto,
  anthropic: AnthropicToolListDto,
  mcp: McpToolListDto,
};
export const TOOL_LIST_MODELS = [...TOOL_FORMAT_MODELS, ...Object.values(LISTS)];
export const TOOL_LIST_SCHEMA = {
  oneOf: Object.values(LISTS).map(ref),
  discriminator: {
    propertyName: 'format',
    mapping: Object.fromEntries(Object.entries(LISTS).map(([format, model]) => [format, ref(model).$ref])),
  },
};

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

const TOOL_CALLED =
  'The tool called; through a toolset, the name the toolset shows it by (its audit row names the real tool in tool, this one in exposedTool)';

export class AuthorizationNeededDto {
  @ApiProperty({ description: "The auth provider's slug" }) provider!: string;
  @ApiProperty({ description: 'The link the end user opens (once, before expiresAt) to connect their account' }) url!: string;
  @ApiProperty({ type: [String] }) scopes!: string[];
  @ApiProperty({ format: 'date-time' }) expiresAt!: string;
}

export class InvocationResultDto {
  @ApiProperty({ format: 'uuid' }) invocationId!: string;
  @ApiProperty({ description: TOOL_CALLED }) tool!: string;
  @ApiProperty({
    enum: ['ok', 'error', 'timeout', 'authorization_required'],
    description:
      'authorization_required: the tool acts with a connection the end user has not made (or that expired, was revoked or lacks a scope); it did not run. error.message says what to tell the user',
  })
  status!: 'ok' | 'error' | 'timeout' | 'authorization_required';
  @ApiPropertyOptional({ ...JSON_VALUE_SCHEMA, description: "The tool's result when status is ok" }) result?: unknown;
  @ApiPropertyOptional({ type: InvocationErrorDto }) error?: InvocationErrorDto;
  @ApiPropertyOptional({ type: AuthorizationNeededDto, description: 'With authorization_required: where the end user connects' })
  authorization?: AuthorizationNeededDto;
  @ApiProperty() durationMs!: number;
  // Never over REST: with error code input_required for an MCP client of protocol revision 2026-07-28, what
  // the tool's source asked it for (src/mcp/input-required).
  inputRequired?: InputRequiredAnswer;
  // Never over REST: with error code missing_client_capability, what the source needs the client to declare.
  requiredCapabilities?: Record<string, unknown>;
}

// A call the project requires a person to approve: validated, audited as pending_approval, not run.
export class PendingApprovalDto {
  @ApiProperty({ format: 'uuid', description: 'Approve or deny it at POST .../invocations/{invocationId}/approve or /deny' })
  invocationId!: string;
  @ApiProperty({ description: TOOL_CALLED }) tool!: string;
  @ApiProperty({ enum: ['pending_approval'] }) status!: 'pending_approval';
  @ApiProperty({ format: 'date-time', description: 'Not decided by then, it expires and never runs' }) expiresAt!: string;
}
