import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error.js';
import { describeBytes } from '../../common/format/describe-bytes.js';
import { writeJsonBytes } from '../../common/json/json-text.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { CallDispatcher, type ToolCallOutcome } from '../call-dispatcher.js';
import { ToolRegistry } from '../tool-registry.js';
import { refusedCallStatus } from '../tools.errors.js';
import type { CallPrincipal, RawToolCall } from '../tool-call.gate.js';
import { TenantRateLimiter } from '../../rate-limit/tenant-rate-limiter.js';
import { type BatchCall, mapBounded, parseBatch } from './batch-request.js';
import type { BatchResultDto, BatchStatus } from '../dto/batch.dto.js';

// BatchResponseDto's results, each already written as UTF-8 JSON (a result kept), or the stand-in of one
// dropped past the cap.
export interface BatchAnswer {
  results: Array<BatchResultDto | Buffer>;
}

// The answer as the pieces of one JSON text (BatchResponseDto), each result a piece of its own: sent one at
// a time (JsonReply.sendPieces), a batch of large results is never one string or one buffer.
export function batchAnswerPieces(answer: BatchAnswer): Buffer[] {
  const pieces: Buffer[] = [Buffer.from('{"results":[')];
  for (const [index, result] of answer.results.entries()) {
    if (index > 0) pieces.push(Buffer.from(','));
    pieces.push(Buffer.isBuffer(result) ? result : writeJsonBytes(result));
  }
  pieces.push(Buffer.from(']}'));
  return pieces;
}
import { IdempotencyService } from '../../calls/idempotency.service.js';
import { AuditService } from '../../audit/audit.service.js';
import { IdempotentCalls } from '../../calls/idempotent-calls.js';
import { FairTurns } from '../../common/scheduling/fair-turns.js';
import { UnreadAnswers } from '../../budgets/unread-answers.js';

// Answers POST .../tools/batch: several tool calls in one request, as models emit them in one turn. Each call takes the one call path
// (CallDispatcher: gate, rate limit, run, audit, events) exactly as a single invoke would; they run
// concurrently, BATCH_CONCURRENCY at a time, and each is answered on its own: a refused call never runs
// and stops nothing else. Only a malformed batch (empty, over 32 calls, duplicate ids) is refused whole, and
// a batch the tenant's request budget cannot pay for in full (each call costs one request, as alone).
@Injectable()
export class BatchRouteService {
  constructor(
    private readonly dispatcher: CallDispatcher,
    private readonly registry: ToolRegistry,
    private readonly keyed: IdempotentCalls,
    private readonly limiter: TenantRateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditService,
    private readonly turns: FairTurns,
    private readonly unread: UnreadAnswers,
  ) {}

  // Each result is written as UTF-8 JSON once, as it is measured against the cap, and sent as those bytes:
  // a batch of large answers is serialised and encoded once, not once to measure and again to send.
  async run(tenantId: string, projectId: string, principal: CallPrincipal, body: unknown, request: AbortController): Promise<BatchAnswer> {
    // The project first, as for a single invoke: a missing or foreign project is one 404 for the batch
    // (whatever the body), then the envelope's 400s before anything runs.
    await this.registry.forProject(tenantId, projectId);
    const calls = parseBatch(body);
    for (const call of calls) if (call.idempotencyKey !== undefined) IdempotencyService.checkKey(call.idempotencyKey);
    // The request paid for one call; the others are charged now, all at once, before any runs.
    await this.limiter.chargeExtraCalls(tenantId, calls.length - 1);
    // The answers together are held to RESPONSE_MAX_BYTES as they arrive: one past it is dropped at once,
    // so a batch of large answers never holds more than the cap (and the calls still running).
    const budget = { left: this.config.calls.responseMaxBytes };
    const since = new Date(Date.now() - 1000);
    // Encoding a large result takes milliseconds of the main thread: one result at a time, in turn with
    // other tenants' (FairTurns), so a batch's 32 results never run back to back ahead of everyone else.
    // The results kept count as the tenant's unread answers from now until the answer is handed to the
    // connection (JsonReply.sendPieces counts them from there): the batch's later calls, and the tenant's other
    // requests, are refused past unreadAnswerBytes.
    const holds: Array<() => void> = [];
    try {
      const results = await mapBounded(calls, this.config.calls.batchConcurrency, async (call) => {
        const result = await this.runOne(tenantId, projectId, principal, call, request);
        await this.turns.take(tenantId);
        const kept = withinResponseCap(result, budget, this.config.calls.responseMaxBytes);
        if (Buffer.isBuffer(kept)) holds.push(this.unread.hold(tenantId, kept.length));
        return kept;
      });
      await this.auditDropped(tenantId, results, since);
      return { results };
    } finally {
      for (const release of holds) release();
    }
  }

  // Each call's audit row says what it did; one whose result was dropped says so too (error code
  // result_too_large, its status unchanged: its effects happened), before the batch is answered.
  private async auditDropped(tenantId: string, results: Array<BatchResultDto | Buffer>, since: Date): Promise<void> {
    // A result kept is written as its JSON bytes; one dropped is the stand-in withinResponseCap made.
    const dropped = results
      .filter((r): r is BatchResultDto => !Buffer.isBuffer(r))
      .filter((r) => r.status === 'error' && r.error?.code === RESULT_TOO_LARGE && 'invocationId' in r && r.invocationId);
    for (const result of dropped) {
      const { invocationId, error } = result as BatchResultDto & { invocationId: string; error: { message: string } };
      await this.audit.markResultDropped(tenantId, invocationId, since, RESULT_TOO_LARGE, `Its result was not delivered: ${error.message}`);
    }
  }

  private async runOne(
    tenantId: string,
    projectId: string,
    principal: CallPrincipal,
    call: BatchCall,
    request: AbortController,
  ): Promise<BatchResultDto> {
    const body = { arguments: call.arguments, ...(call.timeoutMs !== undefined ? { timeoutMs: call.timeoutMs } : {}) };
    const raw: RawToolCall = { tenantId, projectId, principal, toolName: call.tool, body, channel: 'rest' };
    try {
      // A call with a key runs on when the client goes away, and its retry gets the answer (IdempotentCalls).
      if (call.idempotencyKey === undefined) return toResult(call, await this.runUnkeyed(raw, request));
      const answer = await this.keyed.call(raw, call.idempotencyKey);
      return { ...toResult(call, answer.outcome), ...(answer.replayed ? { replayed: true } : {}) };
    } catch (error) {
      if (error instanceof AppError) return refusedResult(call, error);
      throw error;
    }
  }

  // Each call gets its own controller (its deadline must not cancel its neighbours), cancelled with the request.
  private async runUnkeyed(raw: RawToolCall, request: AbortController): Promise<ToolCallOutcome> {
    const controller = new AbortController();
    const onAbort = () => controller.abort(request.signal.reason);
    if (request.signal.aborted) onAbort();
    else request.signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.dispatcher.dispatch(raw, controller);
    } finally {
      request.signal.removeEventListener('abort', onAbort);
    }
  }
}

const RESULT_TOO_LARGE = 'result_too_large';

// A result whose JSON would take the batch's answer past the cap keeps its id, tool and invocation id (its
// audit row tells what it did) and says result_too_large in place of its result.
// Encoding the text at once measures it too: Buffer.byteLength would walk a spliced text as long again.
function withinResponseCap(result: BatchResultDto, budget: { left: number }, cap: number): BatchResultDto | Buffer {
  const bytes = writeJsonBytes(result);
  const size = bytes.length;
  if (size <= budget.left) {
    budget.left -= size;
    return bytes;
  }
  const ran = result.status;
  return {
    id: result.id,
    tool: result.tool,
    ...('invocationId' in result && result.invocationId ? { invocationId: result.invocationId } : {}),
    status: 'error',
    error: {
      code: RESULT_TOO_LARGE,
      message: `This call ran (${ran}), but its result of ${describeBytes(size)} would take the batch's answer past RESPONSE_MAX_BYTES (${describeBytes(cap)}); call it again on its own, or ask for less (a smaller range, a narrower path).`,
      retryable: false,
    },
  };
}

function toResult(call: BatchCall, outcome: ToolCallOutcome): BatchResultDto {
  const { tool, status, ...rest } = outcome;
  return { id: call.id, tool, status, ...rest };
}

// A refusal says what a single invoke would have said (code, message, issues and usage for the model).
function refusedResult(call: BatchCall, error: AppError): BatchResultDto {
  return {
    id: call.id,
    tool: call.tool,
    status: refusalStatus(error),
    error: {
      code: error.code,
      message: error.message,
      retryable: error.status === 429 || error.status === 503 || error.status === 409,
      ...error.extra,
      ...(error.details ? { details: error.details } : {}),
    },
  };
}

function refusalStatus(error: AppError): BatchStatus {
  if (error.status === 429) return 'rate_limited';
  if (error.status === 503) return 'unavailable';
  return refusedCallStatus(error);
}
