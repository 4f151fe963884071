import { type CallToolResult, CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  INPUT_REQUIRED,
  InputRequired,
  type InputRound,
  MISSING_CLIENT_CAPABILITY,
  MissingClientCapability,
  requiredCapabilities,
  roundIsFor,
  undeclaredInput,
} from '../../execution/input-required.js';
import type { ToolContext } from '../../execution/tool-definition.js';
import { ToolError } from '../../execution/tool-error.js';
import { schemaIssue } from './schema-issue.js';
import { MODERN_REVISION, type ModernUpstreams, UpstreamRpcError } from './modern-upstream.js';
import type { UpstreamTarget } from './upstream-mcp-clients.js';

// A tool of an MCP source, called for an MCP client of revision 2026-07-28 (ctx.inputRound) at that revision
// when the source speaks it (ModernUpstreams), else as before (`asBefore`: UpstreamMcpClients, 2025-11-25).
// A source's request for input goes back to the client (InputRequired), unless it asks for something the
// client did not declare it can give. `source` (sourceIdentity) is who asks: a retry whose state another
// source gave (the tool re-pointed between the rounds) reaches none. Called as before, a source has no way to ask for input: one that
// answers input_required anyway fails the call, saying who could have answered it.
export async function callToolInRound(
  modern: ModernUpstreams,
  asBefore: () => Promise<CallToolResult>,
  target: UpstreamTarget,
  tool: string,
  args: Record<string, unknown>,
  ctx: ToolContext,
  source: string,
): Promise<CallToolResult> {
  const round: InputRound | undefined = ctx.inputRound;
  if (round && !roundIsFor(round, source))
    throw new ToolError(
      REQUEST_STATE_MISMATCH,
      `params.requestState was given by another source of '${tool}' (the tool is served by another skill or server now): call again without it and without inputResponses`,
      false,
    );
  if (!round || !(await modern.speaksModern(target, ctx.signal)))
    return withoutInputRequired(await asBefore(), target, round !== undefined);
  let answer;
  try {
    answer = await modern.request(target, {
      method: 'tools/call',
      name: tool,
      arguments: args,
      round,
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
      onProgress: ctx.onProgress,
      logs: ctx.logs,
    });
  } catch (error) {
    // Its headers refused (-32020): a tool that declares parameters to mirror into headers (x-mcp-header,
    // SEP-2243, not sent here). Refused before it ran, it is called as before; it cannot ask for input then.
    if (error instanceof UpstreamRpcError && error.code === HEADER_MISMATCH) return withoutInputRequired(await asBefore(), target, true);
    const required =
      error instanceof UpstreamRpcError && error.code === MISSING_CLIENT_CAPABILITY ? requiredCapabilities(error.data) : null;
    if (required !== null) throw new MissingClientCapability(required, (error as UpstreamRpcError).message);
    // The source's JSON-RPC error is the tool's failure, as when it is called as before.
    if (error instanceof UpstreamRpcError)
      throw new ToolError(
        'upstream_unavailable',
        `The MCP server at ${host(target)} could not be used: MCP error ${error.code}: ${error.message}`,
        true,
      );
    throw error;
  }
  if (answer.kind === 'input_required') {
    const undeclared = undeclaredInput(answer.required.inputRequests, round.clientCapabilities);
    if (undeclared !== null)
      throw new ToolError(
        'undeclared_input',
        `The MCP server at ${host(target)} asked the client for ${undeclared}; Toolgate relays only requests a client declared it answers`,
        false,
      );
    throw new InputRequired({ ...answer.required, source });
  }
  const parsed = CallToolResultSchema.safeParse(answer.result);
  if (!parsed.success)
    throw new ToolError(
      'upstream_unavailable',
      `The MCP server at ${host(target)} could not be used: ${schemaIssue(parsed.error) ?? 'its answer is not a valid MCP result'}; retry later`,
      true,
    );
  return parsed.data;
}

const HEADER_MISMATCH = -32020;
export const REQUEST_STATE_MISMATCH = 'request_state_mismatch';

// An answer of the revisions before 2026-07-28 has no input_required: a source that sends one anyway wants
// input only a client of that revision can give, through a source that says it speaks it (server/discover).
function withoutInputRequired(result: CallToolResult, target: UpstreamTarget, modernCaller: boolean): CallToolResult {
  if ((result as { resultType?: unknown }).resultType !== INPUT_REQUIRED) return result;
  const message = modernCaller
    ? `The MCP server at ${host(target)} asked for input from the client, but does not say it speaks protocol revision ${MODERN_REVISION} (server/discover), which alone relays such a request`
    : `The MCP server at ${host(target)} asked for input from the client (multi round-trip requests), which only an MCP client of protocol revision ${MODERN_REVISION} can give: call the tool through the project's MCP endpoint at that revision`;
  throw new ToolError(INPUT_REQUIRED, message, false);
}

function host(target: UpstreamTarget): string {
  try {
    return new URL(target.url).host;
  } catch {
    return 'the configured address';
  }
}
