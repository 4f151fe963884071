import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { type CallToolResult, ErrorCode, type ListToolsResult, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../common/errors/app-error.js';
import { ClientCancelled } from '../common/http/client-abort-controller.decorator.js';
import type { ToolDefinition } from '../execution/tool-definition.js';
import { invalidIdempotencyKey } from '../calls/calls.errors.js';
import { IdempotentCalls } from '../calls/idempotent-calls.js';
import type { RawToolCall } from '../tools/tool-call.gate.js';
import type { ToolView } from '../tools/tool-catalogue.js';
import { callCost, LoopShare } from '../common/scheduling/loop-share.js';
import { CallDispatcher, type ToolCallOutcome } from '../tools/call-dispatcher.js';
import { type RegisteredTool, ToolRegistry } from '../tools/tool-registry.js';
import type { ClientRound } from './input-required/input-rounds.js';
import { type CallRequest, type Listening, type McpCaller, requestRef } from './mcp-caller.js';
import { McpCancellations } from './mcp-cancellations.js';
import { McpKeySessions } from './mcp-key-sessions.js';
import { isModernRevision } from './mcp-modern.js';
import { MISSING_CLIENT_CAPABILITY } from './mcp-tasks.service.js';
import { FIRST_REVISION_WITH_TASKS } from './mcp-server-info.js';
import {
  advertisesOutputSchema,
  fromInvocation,
  fromRefusal,
  IDEMPOTENCY_KEY_META,
  REPLAYED_META,
  type ResultShape,
  toMcpTool,
} from './mcp-tool-results.js';

// A tools/call on its way to the tool: what stops it, how its result is shaped, where its progress and
// log messages go.
interface CallRun extends Listening {
  cancelled: AbortSignal;
  shape: ResultShape;
  elicitsUrl: () => Promise<boolean>;
  round?: ClientRound;
}

// tools/list and tools/call, however the message came (the direct answers, revision 2026-07-28, the SDK's
// Server): the project's registry as the key may see it, and calls on the path REST invoke takes.
@Injectable()
export class McpToolCalls {
  private readonly logger = new Logger('Mcp');
  // One listing per registry tool array, which keeps its identity until the project's skills change; and
  // one of them for revision 2025-11-25, which marks every tool as one a client may call as a task.
  private readonly listings = {
    plain: new WeakMap<readonly RegisteredTool[] | ToolView, ListToolsResult>(),
    tasks: new WeakMap<readonly RegisteredTool[] | ToolView, ListToolsResult>(),
  };

  // Each listing's size as JSON, measured once: what answering it costs the event loop (LoopShare).
  private readonly listingBytes = new WeakMap<ListToolsResult, number>();

  constructor(
    private readonly registry: ToolRegistry,
    private readonly dispatcher: CallDispatcher,
    private readonly keyed: IdempotentCalls,
    private readonly cancellations: McpCancellations,
    private readonly sessions: McpKeySessions,
    private readonly share: LoopShare,
  ) {}

  // Taken in its tenant's share of the event loop, as a call is: a listing of a few MB costs the loop more
  // than most calls, and one at the rate limit was not charged to anyone (an outsider's 3 MB listings took
  // another tenant's p99 to 93x).
  list(caller: McpCaller): Promise<ListToolsResult> {
    return this.share.run(
      caller.tenantId,
      () => this.listing(caller),
      (listing) => callCost(listing ? (this.listingBytes.get(listing) ?? 0) : 0),
    );
  }

  private async listing(caller: McpCaller): Promise<ListToolsResult> {
    const tasks = caller.revision !== undefined && !isModernRevision(caller.revision) && caller.revision >= FIRST_REVISION_WITH_TASKS;
    const { tools } = ToolRegistry.restrict(await this.registry.forProject(caller.tenantId, caller.projectId), caller.principal.tools);
    const shown = caller.catalogue ? caller.catalogue.view(tools) : tools;
    const listings = tasks ? this.listings.tasks : this.listings.plain;
    let listing = listings.get(shown);
    if (!listing) {
      const listed = caller.catalogue
        ? (shown as ToolView).definitions.map((d: ToolDefinition & { title?: string }) => ({
            ...toMcpTool(d),
            ...(d.title ? { title: d.title } : {}),
          }))
        : tools.map((t) => toMcpTool(t.executor.definition));
      // 2025-11-25: a client may ask for any call as a task (a call that may park for a person is any call:
      // the project's approval list and the key decide); 2026-07-28 has the server decide, per call.
      listing = { tools: tasks ? listed.map((tool) => ({ ...tool, execution: { taskSupport: 'optional' as const } })) : listed };
      listings.set(shown, listing);
      this.listingBytes.set(listing, Buffer.byteLength(JSON.stringify(listing)));
    }
    return listing;
  }

  // A tools/call. `request.id`: its JSON-RPC id, by which notifications/cancelled names it (on any
  // instance: McpCancellations). `request.signal`: the SDK's signal for it (a notifications/cancelled in the
  // same batch). `request.idempotencyKey`: params._meta["dev.toolgate/idempotencyKey"], REST's Idempotency-Key.
  // An unknown tool is the request's error (-32602), not a tool result: MCP's answer to a name tools/list
  // did not offer (the gate has audited the refusal). A tool that tools/list did offer (search mode's
  // call_tool) whose arguments name an unknown tool is a tool that ran and failed: its error result, with
  // the closest names, which a client relays to the model (one turns a JSON-RPC error into a fixed text).
  // MCP's arguments are optional: none is an empty object.
  async call(caller: McpCaller, name: string, sent: unknown, request: CallRequest = {}): Promise<CallToolResult> {
    const args = sent === undefined ? {} : sent;
    const shape = await this.resultShape(caller, name);
    const cancel = new AbortController();
    const release = request.id !== undefined ? this.cancellations.track(requestRef(caller, request.id), cancel) : undefined;
    const onSdkCancel = () => cancel.abort(new ClientCancelled());
    if (request.signal?.aborted) onSdkCancel();
    else request.signal?.addEventListener('abort', onSdkCancel, { once: true });
    try {
      const run = {
        cancelled: cancel.signal,
        shape,
        onProgress: request.onProgress,
        logs: request.logs,
        elicitsUrl: () => this.sessions.elicitsUrl(caller, request),
        round: request.round,
      };
      if (request.idempotencyKey !== undefined) return await this.keyedCall(caller, name, args, run, request.idempotencyKey);
      return await this.plainCall(caller, name, args, run);
    } catch (error) {
      if (error instanceof McpError) throw error;
      if (error instanceof AppError && error.code === 'tool_not_found' && !(await this.offers(caller, name)))
        throw new McpError(ErrorCode.InvalidParams, error.message);
      if (error instanceof AppError) return fromRefusal(error, shape.outputSchema);
      // The SDK would send an error's own message: nothing unexpected reaches a client.
      this.logger.error(error instanceof Error ? error : String(error));
      throw new McpError(ErrorCode.InternalError, 'An unexpected error occurred; it has been logged');
    } finally {
      release?.();
      request.signal?.removeEventListener('abort', onSdkCancel);
    }
  }

  // Whether tools/list showed this tool with an output schema: then structuredContent is only ever a result
  // of that schema (checked when the tool answered: ToolRunner); and whether it relays an
  // upstream MCP server's content. A name that is no tool is refused by the gate.
  async resultShape(caller: McpCaller, name: string): Promise<ResultShape> {
    const { tools } = ToolRegistry.restrict(await this.registry.forProject(caller.tenantId, caller.projectId), caller.principal.tools);
    if (!caller.catalogue) {
      const tool = tools.find((t) => t.executor.definition.name === name);
      return { outputSchema: advertisesOutputSchema(tool?.executor.definition), relaysContent: tool?.executor.relaysMcpContent === true };
    }
    const view = caller.catalogue.view(tools);
    return {
      outputSchema: advertisesOutputSchema(view.definitions.find((d) => d.name === name)),
      relaysContent: relaysContentIn(view, name),
    };
  }

  // Whether tools/list shows a tool of this name to the caller.
  private async offers(caller: McpCaller, name: string): Promise<boolean> {
    const { tools } = ToolRegistry.restrict(await this.registry.forProject(caller.tenantId, caller.projectId), caller.principal.tools);
    if (!caller.catalogue) return tools.some((t) => t.executor.definition.name === name);
    return caller.catalogue.view(tools).definitions.some((d) => d.name === name);
  }

  // Each call its own controller: in a JSON-RPC batch, one call's deadline must not stop the others. The
  // client cancelling it, or going away, stops it.
  private async plainCall(
    caller: McpCaller,
    name: string,
    args: unknown,
    { cancelled, shape, onProgress, logs, elicitsUrl, round }: CallRun,
  ): Promise<CallToolResult> {
    const controller = new AbortController();
    const onCancel = () => controller.abort(cancelled.reason);
    const onGone = () => controller.abort(caller.controller.signal.reason);
    if (cancelled.aborted) onCancel();
    else cancelled.addEventListener('abort', onCancel, { once: true });
    if (caller.controller.signal.aborted) onGone();
    else caller.controller.signal.addEventListener('abort', onGone, { once: true });
    try {
      const outcome = await this.dispatcher.dispatch(rawCall(caller, name, args, { onProgress, logs, round }), controller);
      return await answered(outcome, shape, elicitsUrl, round);
    } finally {
      cancelled.removeEventListener('abort', onCancel);
      caller.controller.signal.removeEventListener('abort', onGone);
    }
  }

  // Under an Idempotency-Key, as over REST: the call runs on when the client goes away and its retry gets the
  // stored answer (marked replayed); notifications/cancelled or the key's end stop it, and that answer is kept.
  private async keyedCall(
    caller: McpCaller,
    name: string,
    args: unknown,
    { cancelled, shape, onProgress, logs, elicitsUrl, round }: CallRun,
    key: unknown,
  ): Promise<CallToolResult> {
    const call = rawCall(caller, name, args, { onProgress, logs, round });
    if (typeof key !== 'string')
      throw invalidIdempotencyKey(`_meta["${IDEMPOTENCY_KEY_META}"] must be a string of 1 to 255 visible ASCII characters`);
    const { outcome, replayed } = await this.keyed.call(call, key, AbortSignal.any([cancelled, caller.keyEnded]));
    const result = await answered(outcome, shape, elicitsUrl, round);
    return replayed ? { ...result, _meta: { ...result._meta, [REPLAYED_META]: true } } : result;
  }
}

// A tool that needs a connection the end user has not made (authorization_required, audited so): a client
// that declared URL-mode elicitation gets -32042 with the link as a URL elicitation (MCP 2025-11-25), any
// other the tool result, isError, with the same message for the model to relay.
// The call as the dispatcher takes it, made over MCP by this caller.
function rawCall(
  caller: McpCaller,
  name: string,
  args: unknown,
  { onProgress, logs, round }: Pick<CallRun, 'onProgress' | 'logs' | 'round'>,
): RawToolCall {
  return {
    tenantId: caller.tenantId,
    projectId: caller.projectId,
    principal: caller.principal,
    toolName: name,
    body: { arguments: args },
    channel: 'mcp',
    catalogue: caller.catalogue,
    onProgress,
    logs,
    inputRound: round?.round,
  };
}

// A source's request for input goes to a client of revision 2026-07-28 as the source asked (its state sealed).
async function answered(
  outcome: ToolCallOutcome,
  shape: ResultShape,
  elicitsUrl: () => Promise<boolean>,
  round?: ClientRound,
): Promise<CallToolResult> {
  if (round && outcome.status === 'error' && outcome.inputRequired)
    return round.answer(outcome.inputRequired, outcome.invocationId) as unknown as CallToolResult;
  if (round && outcome.status === 'error' && outcome.requiredCapabilities) {
    throw new McpError(MISSING_CLIENT_CAPABILITY, outcome.error?.message ?? 'Missing required client capability', {
      requiredCapabilities: outcome.requiredCapabilities,
    });
  }
  if (outcome.status === 'authorization_required' && outcome.authorization && (await elicitsUrl())) {
    const message = outcome.error?.message ?? `Ask the user to open the link to connect ${outcome.authorization.provider}, then call again`;
    throw new McpError(ErrorCode.UrlElicitationRequired, message, {
      elicitations: [{ mode: 'url', elicitationId: randomUUID(), url: outcome.authorization.url, message }],
    });
  }
  return fromInvocation(outcome, shape);
}

// Through a toolset, the real tool behind a name relays upstream content; a dispatcher (call_tool) does not.
function relaysContentIn(view: ToolView, name: string): boolean {
  try {
    return view.find(name).tool.executor.relaysMcpContent === true;
  } catch {
    return false;
  }
}
