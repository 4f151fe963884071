import { ErrorCode, type GetPromptResult, GetPromptResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  MISSING_CLIENT_CAPABILITY,
  requiredCapabilities,
  roundIsFor,
  sourceIdentity,
  undeclaredInput,
} from '../../execution/input-required.js';
import { ToolError } from '../../execution/tool-error.js';
import { type ModernUpstreams, UpstreamRpcError } from '../../skills/mcp/modern-upstream.js';
import { schemaIssue } from '../../skills/mcp/schema-issue.js';
import type { FederatedSource } from '../federated-source.js';
import type { ClientRound, InputRequiredResult } from './input-rounds.js';

// A prompt of an MCP source, got for a client of revision 2026-07-28 (`round`) at that revision when the
// source speaks it, else as before (`asBefore`). The source's JSON-RPC error keeps its code and message, as
// before (its data only for -32021: what the client must declare); its request for input goes to the
// client, unless it asks for something the client did not declare.
export async function promptInRound(
  modern: ModernUpstreams,
  source: FederatedSource,
  name: string,
  args: Record<string, string> | undefined,
  round: ClientRound,
  signal: AbortSignal,
  asBefore: () => Promise<GetPromptResult | InputRequiredResult>,
): Promise<GetPromptResult | InputRequiredResult> {
  const { target } = source;
  const asker = sourceIdentity(source.name, target.url);
  // A state another source gave (the prompt re-pointed between the rounds) goes to none.
  if (!roundIsFor(round.round, asker))
    throw new McpError(
      ErrorCode.InvalidParams,
      'params.requestState was given by another source of this prompt (it is served by another skill or server now): call again without it and without inputResponses',
    );
  if (!(await modern.speaksModern(target, signal))) return asBefore();
  let answer;
  try {
    answer = await modern.request(target, {
      method: 'prompts/get',
      name,
      arguments: args,
      round: round.round,
      timeoutMs: source.timeoutMs,
      signal,
    });
  } catch (error) {
    if (!(error instanceof UpstreamRpcError)) throw error;
    const required = error.code === MISSING_CLIENT_CAPABILITY ? requiredCapabilities(error.data) : null;
    throw new McpError(error.code, error.message, required !== null ? { requiredCapabilities: required } : undefined);
  }
  if (answer.kind === 'input_required') {
    const undeclared = undeclaredInput(answer.required.inputRequests, round.round.clientCapabilities);
    if (undeclared !== null)
      throw new ToolError(
        'undeclared_input',
        `${source.name} asked the client for ${undeclared}; Toolgate relays only requests a client declared it answers`,
        false,
      );
    return round.answer({ ...answer.required, source: asker });
  }
  const parsed = GetPromptResultSchema.safeParse(answer.result);
  if (!parsed.success)
    throw new ToolError(
      'upstream_unavailable',
      `${source.name} answered prompts/get, but ${schemaIssue(parsed.error) ?? 'its answer is not a valid MCP result'}`,
      true,
    );
  return parsed.data;
}
