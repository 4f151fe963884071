import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { JsonText } from '../common/json/json-text.js';
import type { AppError } from '../common/errors/app-error.js';
import type { InvocationResultDto, PendingApprovalDto } from '../tools/dto/tool.dto.js';
import type { ToolDefinition } from '../execution/tool-definition.js';
import { formatTool } from '../tools/tool-formats.js';

// Where an MCP client finds the audit row of a call: GET /v1/projects/{id}/invocations/{invocationId}.
export const INVOCATION_ID_META = 'dev.toolgate/invocationId';
// A tools/call's Idempotency-Key (params._meta), and the mark on a result that is the stored answer of an
// earlier call with that key.
export const IDEMPOTENCY_KEY_META = 'dev.toolgate/idempotencyKey';
export const REPLAYED_META = 'dev.toolgate/idempotentReplayed';
// An error result's machine-readable detail ({ status, error }), and a parked call's pending approval: in
// _meta, which no output schema governs, so a client that checks structuredContent against the tool's
// outputSchema still reads them.
export const ERROR_META = 'dev.toolgate/error';
export const PENDING_APPROVAL_META = 'dev.toolgate/pendingApproval';

// A tool as tools/list shows it: the REST listing's `format=mcp` entry. MCP wants an output schema to
// describe an object (structuredContent is one); a tool whose declared output is not an object is
// listed without it rather than making the whole listing unreadable to a client that checks.
export function toMcpTool(definition: ToolDefinition): Tool {
  const tool = formatTool(definition, 'mcp') as unknown as Tool;
  if (definition.title) tool.title = definition.title;
  if (tool.outputSchema && tool.outputSchema.type !== 'object') {
    const { outputSchema: _dropped, ...rest } = tool;
    return rest;
  }
  return tool;
}

// Whether tools/list advertises an output schema for this tool (toMcpTool keeps only object schemas).
export const advertisesOutputSchema = (definition: ToolDefinition | undefined): boolean => definition?.outputSchema?.type === 'object';

// How a tool's results are shaped for an MCP client: `outputSchema`, whether tools/list showed one (then
// structuredContent is only ever a result of it); `relaysContent`, whether the tool is an upstream MCP
// server's, whose content (images, audio, embedded resources, links) is handed on as that server sent it.
export interface ResultShape {
  outputSchema: boolean;
  relaysContent: boolean;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// The outcome of a call that ran: the JSON result as structuredContent and as text (checked against the
// tool's outputSchema before it got here: ToolRunner), or an upstream MCP server's content as it
// came, or isError with the tool's error written for the model (status error or timeout).
export function fromInvocation(outcome: InvocationResultDto | PendingApprovalDto, shape: ResultShape): CallToolResult {
  const { outputSchema } = shape;
  const _meta = { [INVOCATION_ID_META]: outcome.invocationId };
  if (outcome.status === 'pending_approval') return awaitingApproval(outcome, _meta, outputSchema);
  if (outcome.status === 'ok' && shape.relaysContent && isUpstreamContent(outcome.result))
    return { content: outcome.result.content, _meta };
  if (outcome.status === 'ok') {
    const { result } = outcome;
    // A result written as JSON text (a big listing) is that text, and is spliced in where the answer is written.
    const text = result instanceof JsonText ? result.text : JSON.stringify(result ?? null);
    // structuredContent is an object in MCP: any other JSON value is carried as { result }.
    const isObject = result instanceof JsonText ? result.isObject : isPlainObject(result);
    const structuredContent = (isObject ? result : { result: result ?? null }) as Record<string, unknown>;
    return { content: [{ type: 'text', text }], structuredContent, _meta };
  }
  const error = outcome.error ?? { code: 'internal_error', message: 'The tool failed', retryable: false };
  return errorResult(error.message, { status: outcome.status, error }, _meta, outputSchema);
}

// The same result with structuredContent as an object, for code that handles it as one (the MCP SDK's server).
export function withParsedContent(result: CallToolResult): CallToolResult {
  const { structuredContent } = result as { structuredContent?: unknown };
  return structuredContent instanceof JsonText
    ? { ...result, structuredContent: JSON.parse(structuredContent.text) as Record<string, unknown> }
    : result;
}

// An upstream MCP server's answer without structuredContent, as the skill executor returns it: { content }
// and nothing else, each item a content block.
function isUpstreamContent(result: unknown): result is { content: CallToolResult['content'] } {
  if (!isPlainObject(result) || Object.keys(result).length !== 1 || !Array.isArray(result.content)) return false;
  return result.content.every((item) => isPlainObject(item) && typeof item.type === 'string');
}

// A call refused before it ran (invalid arguments, a path outside the workspace, a rate limit): the same
// message as the REST 4xx, as a tool result the model can read and act on.
export function fromRefusal(error: AppError, outputSchema: boolean): CallToolResult {
  const detail = {
    status: 'refused',
    error: { code: error.code, message: error.message, ...error.extra, ...(error.details ? { details: error.details } : {}) },
  };
  return errorResult(error.message, detail, {}, outputSchema);
}

// What an MCP task keeps in place of a result that did not fit in the tenant's storedAnswerBytes: an error
// result with the message, of the same shape as any other.
export function notKeptResult(message: string, invocationId: string, outputSchema: boolean): CallToolResult {
  const detail = { status: 'error', error: { code: 'tenant_budget_exceeded', message } };
  return errorResult(message, detail, { [INVOCATION_ID_META]: invocationId }, outputSchema);
}

// The detail is in _meta always, and also structuredContent when no output schema says what that holds
// (SDK clients check structuredContent against the schema even on an error result).
function errorResult(
  message: string,
  detail: Record<string, unknown>,
  meta: Record<string, unknown>,
  outputSchema: boolean,
): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: message }],
    ...(outputSchema ? {} : { structuredContent: detail }),
    _meta: { ...meta, [ERROR_META]: detail },
  };
}

// A call the project requires a person to approve: not a result. The model is told it has not run and
// where its outcome will be. A tool with an output schema cannot answer a result of another shape, and an
// answer without structuredContent must be an error to its clients: it is one then (isError, "not run").
function awaitingApproval(outcome: PendingApprovalDto, meta: Record<string, unknown>, outputSchema: boolean): CallToolResult {
  const text =
    `This call of ${outcome.tool} awaits approval by a person and has not run yet (invocation ${outcome.invocationId}, ` +
    `expires ${outcome.expiresAt}). Do not repeat it; its outcome will be at GET /v1/projects/{projectId}/invocations/${outcome.invocationId}.`;
  const _meta = { ...meta, [PENDING_APPROVAL_META]: { ...outcome } };
  if (outputSchema) return { isError: true, content: [{ type: 'text', text }], _meta };
  return { content: [{ type: 'text', text }], structuredContent: { ...outcome }, _meta };
}
