import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error.js';
import { describeBytes } from '../common/format/describe-bytes.js';
import { writeJson } from '../common/json/json-text.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ToolCallsService, type ToolCallOutcome } from '../tools/tool-calls.service.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import { refusedCallStatus } from '../tools/tools.errors.js';
import type { CallPrincipal, RawToolCall } from '../tools/tool-call.gate.js';
import { TenantRateLimiter } from '../rate-limit/tenant-rate-limiter.js';
import { type BatchCall, mapBounded, parseBatch } from './batch-request.js';
import type { BatchResponseDto, BatchResultDto, BatchStatus } from './dto/batch.dto.js';
import { IdempotencyService } from './idempotency.service.js';
import { KeyedCallService } from './keyed-call.service.js';

// Several tool calls in one request, as models emit them in one turn. Each call takes the one call path
// (ToolCallsService: gate, rate limit, run, audit, events) exactly as a single invoke would; they run
// concurrently, BATCH_CONCURRENCY at a time, and each is answered on its own: a refused call never runs
// and stops nothing else. Only a malformed batch (empty, over 32 calls, duplicate ids) is refused whole, and
// a batch the tenant's request budget cannot pay for in full (each call costs one request, as alone).
@Injectable()
export class ToolBatchService {
  constructor(
    private readonly calls: ToolCallsService,
    private readonly registry: ToolRegistry,
    private readonly keyed: KeyedCallService,
    private readonly limiter: TenantRateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async run(tenantId: string, projectId: string, principal: CallPrincipal, body: unknown, request: AbortController): Promise<BatchResponseDto> {
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
    const results = await mapBounded(calls, this.config.calls.batchConcurrency, async (call) =>
      withinResponseCap(await this.runOne(tenantId, projectId, principal, call, request), budget, this.config.calls.responseMaxBytes),
    );
    return { results };
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
      // A call with a key runs on when the client goes away, and its retry gets the answer (KeyedCallService).
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
      return await this.calls.call(raw, controller);
    } finally {
      request.signal.removeEventListener('abort', onAbort);
    }
  }
}

// A result whose JSON would take the batch's answer past the cap keeps its id, tool and invocation id (its
// audit row tells what it did) and says result_too_large in place of its result.
function withinResponseCap(result: BatchResultDto, budget: { left: number }, cap: number): BatchResultDto {
  const size = Buffer.byteLength(writeJson(result));
  if (size <= budget.left) {
    budget.left -= size;
    return result;
  }
  const ran = result.status;
  return {
    id: result.id,
    tool: result.tool,
    ...('invocationId' in result && result.invocationId ? { invocationId: result.invocationId } : {}),
    status: 'error',
    error: {
      code: 'result_too_large',
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
