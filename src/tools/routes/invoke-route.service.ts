import { Injectable } from '@nestjs/common';
import type { RawToolCall } from '../tool-call.gate.js';
import { CallDispatcher, type ToolCallOutcome } from '../call-dispatcher.js';
import { IdempotentCalls } from '../../calls/idempotent-calls.js';

export interface InvokeAnswer {
  status: number;
  headers: Record<string, string>;
  body: ToolCallOutcome;
}

// Answers POST .../tools/:toolName/invoke (and a toolset's invoke): one call dispatched on the call path,
// under its Idempotency-Key when it has one (and then not cancelled when the client goes away: the retry
// gets its answer).
@Injectable()
export class InvokeRouteService {
  constructor(
    private readonly dispatcher: CallDispatcher,
    private readonly keyed: IdempotentCalls,
  ) {}

  async invoke(call: RawToolCall, idempotencyKey: string | undefined, controller: AbortController): Promise<InvokeAnswer> {
    if (idempotencyKey === undefined) return answer(await this.dispatcher.dispatch(call, controller), false);
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
