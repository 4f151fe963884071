import { Injectable } from '@nestjs/common';
import type { RawToolCall } from '../tools/tool-call.gate.js';
import { ToolCallsService, type ToolCallOutcome } from '../tools/tool-calls.service.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import { IdempotencyService } from './idempotency.service.js';

export interface InvokeAnswer {
  status: number;
  headers: Record<string, string>;
  body: ToolCallOutcome;
}

// POST .../invoke: one call on the one call path, under its Idempotency-Key when it has one.
@Injectable()
export class ToolInvokeService {
  constructor(
    private readonly calls: ToolCallsService,
    private readonly registry: ToolRegistry,
    private readonly idempotency: IdempotencyService,
  ) {}

  async invoke(call: RawToolCall, idempotencyKey: string | undefined, controller: AbortController): Promise<InvokeAnswer> {
    if (idempotencyKey === undefined) return answer(await this.calls.call(call, controller), false);
    IdempotencyService.checkKey(idempotencyKey);
    // The project first: a key is stored against it, and a foreign one must answer 404 as without a key.
    const project = await this.registry.forProject(call.tenantId, call.projectId);
    // A tool this key may not use is refused by the gate (and audited) without touching the key's store, so
    // the store can neither tell the key what others stored nor replay it their answers.
    if (!ToolRegistry.offers(project, call.principal.tools, call.toolName)) return answer(await this.calls.call(call, controller), false);
    const { tenantId, projectId } = call;
    const fingerprinted = { tool: call.toolName, ...(typeof call.body === 'object' && call.body !== null ? call.body : { body: call.body }) };
    const { outcome, replayed } = await this.idempotency.run({ tenantId, projectId, key: idempotencyKey }, fingerprinted, () =>
      this.calls.call(call, controller),
    );
    return answer(outcome, replayed);
  }
}

function answer(outcome: ToolCallOutcome, replayed: boolean): InvokeAnswer {
  return {
    status: outcome.status === 'pending_approval' ? 202 : 200,
    headers: replayed ? { 'Idempotent-Replayed': 'true' } : {},
    body: outcome,
  };
}
