import { Injectable } from '@nestjs/common';
import type { RawToolCall } from '../tools/tool-call.gate.js';
import { ToolCallsService, type ToolCallOutcome } from '../tools/tool-calls.service.js';
import { KeyedCallService } from './keyed-call.service.js';

export interface InvokeAnswer {
  status: number;
  headers: Record<string, string>;
  body: ToolCallOutcome;
}

// POST .../invoke: one call on the one call path, under its Idempotency-Key when it has one (and then
// not cancelled when the client goes away: the retry gets its answer).
@Injectable()
export class ToolInvokeService {
  constructor(
    private readonly calls: ToolCallsService,
    private readonly keyed: KeyedCallService,
  ) {}

  async invoke(call: RawToolCall, idempotencyKey: string | undefined, controller: AbortController): Promise<InvokeAnswer> {
    if (idempotencyKey === undefined) return answer(await this.calls.call(call, controller), false);
    const { outcome, replayed } = await this.keyed.call(call, idempotencyKey);
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
