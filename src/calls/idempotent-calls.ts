import { Injectable } from '@nestjs/common';
import { ClientDisconnected } from '../common/http/client-abort-controller.decorator.js';
import type { RawToolCall } from '../tools/tool-call.gate.js';
import { CallDispatcher, type ToolCallOutcome } from '../tools/call-dispatcher.js';
import { type ProjectTools, ToolRegistry } from '../tools/tool-registry.js';
import { IdempotencyService } from './idempotency.service.js';
import { CallAdmission } from '../budgets/call-admission.js';
import { UnreadAnswers } from '../budgets/unread-answers.js';

export interface IdempotentAnswer {
  outcome: ToolCallOutcome;
  replayed: boolean;
}

// Runs a tool call once per Idempotency-Key, whichever channel brought it (REST invoke, a batch, MCP
// tools/call), and replays its stored answer to a retry (IdempotencyService keeps the answers). It runs with a controller of its own, not its client's: a client that goes away does not cancel it, it
// runs to its end or its deadline and its answer is kept for the retry the key exists for (as Stripe's keys
// behave). Only an explicit cancellation stops it (MCP notifications/cancelled, the caller's key revoked),
// and that answer is kept too. A shutdown still stops it after its grace, like any call.
@Injectable()
export class IdempotentCalls {
  constructor(
    private readonly dispatcher: CallDispatcher,
    private readonly registry: ToolRegistry,
    private readonly idempotency: IdempotencyService,
    private readonly admission: CallAdmission,
    private readonly unread: UnreadAnswers,
  ) {}

  async call(call: RawToolCall, key: string, cancel?: AbortSignal): Promise<IdempotentAnswer> {
    IdempotencyService.checkKey(key);
    // The project first: a key is stored against it, and a foreign one must answer 404 as without a key.
    const project = await this.registry.forProject(call.tenantId, call.projectId);
    const controller = new AbortController();
    const onCancel = () => controller.abort(cancel?.reason instanceof ClientDisconnected ? cancel.reason : new ClientDisconnected());
    if (cancel?.aborted) onCancel();
    else cancel?.addEventListener('abort', onCancel, { once: true });
    try {
      // A tool this key may not use is refused by the gate (and audited) without touching the key's store,
      // so the store can neither tell the key what others stored nor replay it their answers.
      if (!offered(project, call)) return { outcome: await this.dispatcher.dispatch(call, controller), replayed: false };
      const { tenantId, projectId, toolName, body } = call;
      const through = call.catalogue ? { toolset: call.catalogue.toolset } : {};
      // The end user is part of the call: one person's stored answer (their account's data, their link to
      // connect) is never replayed to another who sends the same key.
      const forUser = call.principal.user !== undefined ? { user: call.principal.user } : {};
      // A round of a multi round-trip request (MCP revision 2026-07-28) is the call with its answers: a retry
      // that answers otherwise (declines what it accepted) is another payload, refused, never the first's replay.
      const round = call.inputRound;
      const answering = {
        ...(round?.inputResponses !== undefined && { inputResponses: round.inputResponses }),
        ...(round?.requestState !== undefined && { requestState: round.requestState }),
      };
      const fingerprinted = {
        tool: toolName,
        ...through,
        ...forUser,
        ...(typeof body === 'object' && body !== null ? body : { body }),
        ...answering,
      };
      // A call whose source asked the client for input (MCP revision 2026-07-28) has not finished: its key is
      // released, as for a refusal, so the client's retry with its answers runs and its outcome is kept.
      const unlessInputRequired = (outcome: ToolCallOutcome) =>
        outcome.status === 'error' && outcome.inputRequired ? Promise.reject(new Unfinished(outcome)) : outcome;
      // The key's lookup, and the replay of an answer kept, hold a place of the tenant's concurrentCalls and
      // start only within its unreadAnswerBytes, as a call that runs does: a replay reads the whole stored
      // answer (up to RESPONSE_MAX_BYTES) from the database, and forty replays at once of a 30 MB answer held
      // the database's pool and 1.5 GB. The place is handed back before the call runs: the dispatcher takes its own.
      const releaseLookup = await this.admission.admit(tenantId);
      try {
        const waiting = this.unread.check(tenantId);
        if (waiting) await waiting;
        return await this.idempotency.run({ tenantId, projectId, apiKeyId: call.principal.apiKeyId, key }, fingerprinted, () => {
          releaseLookup();
          return this.dispatcher.dispatch(call, controller).then(unlessInputRequired);
        });
      } finally {
        releaseLookup();
      }
    } catch (error) {
      if (error instanceof Unfinished) return { outcome: error.outcome, replayed: false };
      throw error;
    } finally {
      cancel?.removeEventListener('abort', onCancel);
    }
  }
}

// Whether the key may call this name: in the project's tools, or through a toolset among its exposed tools
// (call_tool is always there in search mode; the tool it names is judged by the gate).
function offered(project: ProjectTools, call: RawToolCall): boolean {
  if (!call.catalogue) return ToolRegistry.offers(project, call.principal.tools, call.toolName);
  const view = call.catalogue.view(ToolRegistry.restrict(project, call.principal.tools).tools);
  // What the model is shown (search mode's search_tools and call_tool), or a tool it may name.
  if (view.definitions.some((definition) => definition.name === call.toolName)) return true;
  try {
    view.find(call.toolName);
    return true;
  } catch {
    return false;
  }
}

class Unfinished extends Error {
  constructor(readonly outcome: ToolCallOutcome) {
    super('The call asked its client for input');
  }
}
