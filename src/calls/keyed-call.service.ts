import { Injectable } from '@nestjs/common';
import { ClientDisconnected } from '../common/http/client-abort-controller.decorator.js';
import type { RawToolCall } from '../tools/tool-call.gate.js';
import { ToolCallsService, type ToolCallOutcome } from '../tools/tool-calls.service.js';
import { type ProjectTools, ToolRegistry } from '../tools/tool-registry.js';
import { IdempotencyService } from './idempotency.service.js';

export interface KeyedAnswer {
  outcome: ToolCallOutcome;
  replayed: boolean;
}

// A tool call under an Idempotency-Key, whichever channel brought it (REST invoke, a batch, MCP tools/call).
// It runs with a controller of its own, not its client's: a client that goes away does not cancel it, it
// runs to its end or its deadline and its answer is kept for the retry the key exists for (as Stripe's keys
// behave). Only an explicit cancellation stops it (MCP notifications/cancelled, the caller's key revoked),
// and that answer is kept too. A shutdown still stops it after its grace, like any call.
@Injectable()
export class KeyedCallService {
  constructor(
    private readonly calls: ToolCallsService,
    private readonly registry: ToolRegistry,
    private readonly idempotency: IdempotencyService,
  ) {}

  async call(call: RawToolCall, key: string, cancel?: AbortSignal): Promise<KeyedAnswer> {
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
      if (!offered(project, call)) return { outcome: await this.calls.call(call, controller), replayed: false };
      const { tenantId, projectId, toolName, body } = call;
      const through = call.catalogue ? { toolset: call.catalogue.toolset } : {};
      const fingerprinted = { tool: toolName, ...through, ...(typeof body === 'object' && body !== null ? body : { body }) };
      return await this.idempotency.run({ tenantId, projectId, apiKeyId: call.principal.apiKeyId, key }, fingerprinted, () => this.calls.call(call, controller));
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
