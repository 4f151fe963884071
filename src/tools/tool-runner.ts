import path from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/errors/app-error.js';
import { droppedResult, type JsonLimits, measureJsonSize, RESULT_MAX_DEPTH } from '../common/json/bounded-json.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { inSpan, tracingEnabled } from '../common/tracing/tracer.js';
import { ClientCancelled, ClientDisconnected } from '../common/http/client-abort-controller.decorator.js';
import { oneLine } from '../execution/validation/json-preview.js';
import { WorkspaceFsError } from '../workspace/fs/workspace-fs.js';
import { renameInResult, renameTools } from './exposed-texts.js';
import { InFlightCalls } from './in-flight-calls.js';
import { FairTurns } from '../common/scheduling/fair-turns.js';
import { setWallClockTimeout } from '../common/scheduling/wall-clock-timer.js';
import { checkToolOutput } from './tool-output-check.js';
import { CallRecorder, withPolicy } from './call-recorder.js';
import type { CallOutcome } from './call-recorder.js';
import type { InvocationResultDto } from './dto/tool.dto.js';
import type { ValidatedToolCall } from './tool-call.gate.js';
import type { ToolContext } from '../execution/tool-definition.js';
import { ToolError } from '../execution/tool-error.js';
import { type AuthorizationLink, AuthorizationRequired } from '../execution/authorization-required.js';
import { INPUT_REQUIRED, type InputRequiredAnswer, InputRequired, MissingClientCapability } from '../execution/input-required.js';
import { redactAppError, redactMessage } from '../common/secrets/secret-redaction.js';

const TIMED_OUT = Symbol('timed out');

// What a run comes to: a refusal from the executor, or what the call answers.
type Outcome =
  | AppError
  | {
      status: 'ok' | 'error' | 'timeout' | 'authorization_required' | 'input_required';
      result?: unknown;
      error?: Required<CallOutcome>['error'] & { retryable: boolean };
      // authorization_required: the link for the user, and what the audit keeps instead of it.
      authorization?: AuthorizationLink;
      audited?: string;
      // input_required: what the tool's MCP source asked the client for (answered as an error, code input_required).
      inputRequired?: InputRequiredAnswer;
      // missing_client_capability: what the tool's MCP source needs the client to declare.
      requiredCapabilities?: Record<string, unknown>;
    };

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown; aborted: boolean } | typeof TIMED_OUT;

// Runs a validated call on its executor: with a deadline no executor can outlast, cancelled when the client leaves,
// audited once, and answered 200 whenever the tool ran (a refusal from the executor stays a 4xx).
@Injectable()
export class ToolRunner {
  private readonly logger = new Logger('Tools');

  constructor(
    private readonly recorder: CallRecorder,
    private readonly inFlight: InFlightCalls,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly turns: FairTurns,
  ) {}

  // `controller` is the request's: aborted when the client leaves, and here when the deadline passes.
  async run(call: ValidatedToolCall, controller: AbortController): Promise<InvocationResultDto> {
    const name = call.tool.executor.definition.name;
    const identity = withPolicy(
      {
        tenantId: call.tenantId,
        projectId: call.projectId,
        invocationId: call.invocationId,
        tool: name,
        channel: call.channel,
        caller: call.caller,
      },
      call.policy,
    );
    if (call.principal.user !== undefined) identity.user = call.principal.user;
    if (call.exposedAs) {
      identity.toolset = call.exposedAs.toolset;
      identity.exposedTool = call.exposedAs.name;
    }
    this.inFlight.admit();
    this.recorder.started(identity);

    const settled = tracingEnabled()
      ? await inSpan('toolgate.execute', { 'toolgate.tool': name, 'toolgate.channel': call.channel }, () =>
          this.runWithDeadline(call, controller),
        )
      : await this.runWithDeadline(call, controller);
    // Measuring a result against the caps writes it as JSON: milliseconds per MiB of the main thread, taken
    // in turn with other tenants' large results rather than back to back with this tenant's others.
    if (settled !== TIMED_OUT && settled.ok) await this.turns.take(call.tenantId);
    const outcome = asShown(this.toOutcome(settled, call, controller.signal, call.redacted.secrets), call);
    if (outcome instanceof AppError) {
      // The executor's refusal reaches the caller, an MCP client and a stored outcome as the audit has it.
      const refusal = redactAppError(outcome, (text) => redactMessage(text, call.redacted.secrets));
      await this.recorder.finished(identity, {
        status: 'denied',
        error: { code: refusal.code, message: refusal.message },
        arguments: call.redacted,
        startedAt: call.startedAt,
      });
      throw refusal;
    }
    // The link connects whoever opens it: the caller gets it, the audit row says why it was needed.
    const audited = outcome.error && outcome.audited !== undefined ? { code: outcome.error.code, message: outcome.audited } : outcome.error;
    const durationMs = await this.recorder.finished(identity, {
      status: outcome.status,
      error: audited,
      arguments: call.redacted,
      startedAt: call.startedAt,
    });
    // Through a toolset, the name the model called it by (the audit row names both).
    const tool = call.exposedAs?.name ?? name;
    if (outcome.status === 'ok')
      return { invocationId: call.invocationId, tool, status: outcome.status, result: outcome.result, durationMs };
    // Not finished, audited so: to its caller an error naming what the source asked for (an MCP client of
    // 2026-07-28 gets the source's request itself: src/mcp/input-required).
    if (outcome.status === INPUT_REQUIRED)
      return {
        invocationId: call.invocationId,
        tool,
        status: 'error',
        error: outcome.error,
        inputRequired: outcome.inputRequired,
        durationMs,
      };
    return {
      invocationId: call.invocationId,
      tool,
      status: outcome.status,
      error: outcome.error,
      ...(outcome.authorization && { authorization: outcome.authorization }),
      ...(outcome.requiredCapabilities && { requiredCapabilities: outcome.requiredCapabilities }),
      durationMs,
    };
  }

  private async runWithDeadline(call: ValidatedToolCall, controller: AbortController): Promise<Settled> {
    // The executor is raced against the deadline: one that ignores its signal still cannot hold the caller.
    // The deadline keeps the wall clock, as the audit row's duration does: a call audited `timeout` ran its
    // timeout in full.
    let cancelDeadline: (() => void) | undefined;
    const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
      cancelDeadline = setWallClockTimeout(() => {
        controller.abort(new Error('timeout'));
        resolve(TIMED_OUT);
      }, call.timeoutMs);
    });
    const execution = this.start(call, controller.signal).then(
      (value): Settled => ({ ok: true, value }),
      (error: unknown): Settled => ({ ok: false, error, aborted: controller.signal.aborted }),
    );
    this.inFlight.track(call.invocationId, controller, execution);
    try {
      const raced = await Promise.race([execution, deadline]);
      if (raced !== TIMED_OUT || call.tool.executor.settlesOnStop !== true) return raced;
      // Told to stop, it either never began its change (still waiting: a quota measurement, a thread) or
      // finishes it: the answer waits to say which, so no write lands after a row that says it was stopped.
      const late = await execution;
      return late !== TIMED_OUT && late.ok ? late : TIMED_OUT;
    } finally {
      cancelDeadline?.();
    }
  }

  // An executor that throws before returning its promise is answered and audited like one that rejects.
  private start(call: ValidatedToolCall, signal: AbortSignal): Promise<unknown> {
    try {
      // Optional fields are set, not spread in: one object shape for every call.
      const context: ToolContext = {
        tenantId: call.tenantId,
        projectId: call.projectId,
        invocationId: call.invocationId,
        workspace: call.workspace,
        project: call.settings,
        signal,
        timeoutMs: call.timeoutMs,
      };
      if (call.principal.user !== undefined) context.user = call.principal.user;
      if (call.pathPrefix !== null) context.fileRoot = path.posix.join(call.workspace, call.pathPrefix);
      if (call.onProgress) context.onProgress = call.onProgress;
      if (call.logs) context.logs = call.logs;
      if (call.inputRound) context.inputRound = call.inputRound;
      return call.tool.executor.execute(call.args, context);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  // A result no answer could carry (nested past RESULT_MAX_DEPTH, or past RESULT_MAX_BYTES as JSON) is
  // dropped here, once for every channel: the run counts, and the call answers (and stores) an error naming the cap.
  // The call keeps its result's size (resultBytes) for what the call cost (LoopShare).
  private withinResultCaps(
    result: unknown,
    call: ValidatedToolCall,
  ): { status: 'ok'; result: unknown } | { status: 'error'; error: { code: string; message: string; retryable: boolean } } {
    const limits: JsonLimits = { maxDepth: RESULT_MAX_DEPTH, maxBytes: this.config.tools.resultMaxBytes };
    const measured = measureJsonSize(result, limits);
    if (!('bytes' in measured)) return { status: 'error', error: droppedResult(measured, limits) };
    call.resultBytes = measured.bytes;
    return { status: 'ok', result };
  }

  private toOutcome(settled: Settled, call: ValidatedToolCall, signal: AbortSignal, secrets: readonly string[]): Outcome {
    if (settled === TIMED_OUT) {
      return {
        status: 'timeout',
        error: {
          code: 'timeout',
          message: `The tool did not finish within ${call.timeoutMs} ms and was stopped${call.tool.executor.settlesOnStop === true ? ' before it changed anything' : ''}`,
          retryable: true,
        },
      };
    }
    if (settled.ok) {
      const capped = this.withinResultCaps(settled.value, call);
      if (capped.status !== 'ok') return capped;
      const mismatch = checkToolOutput(call.tool.executor.definition, capped.result);
      return mismatch ? { status: 'error', error: mismatch } : capped;
    }
    const error = settled.error;
    // Stopped from outside: say why, whatever the executor made of its aborted signal.
    if (settled.aborted && signal.reason instanceof ClientCancelled) {
      const why = signal.reason.clientReason ? ` (${redactMessage(oneLine(signal.reason.clientReason, 200), secrets)})` : '';
      return {
        status: 'error',
        error: { code: 'cancelled', message: `The client cancelled the call${why}; it was stopped`, retryable: true },
      };
    }
    if (settled.aborted && signal.reason instanceof ClientDisconnected) {
      return { status: 'error', error: { code: 'cancelled', message: 'The client disconnected; the call was cancelled', retryable: true } };
    }
    if (settled.aborted && this.inFlight.isDraining) {
      return {
        status: 'error',
        error: { code: 'shutting_down', message: 'The service shut down while the call ran; it was stopped', retryable: true },
      };
    }
    if (error instanceof AuthorizationRequired) {
      const message = error.message;
      return {
        status: 'authorization_required',
        error: { code: 'authorization_required', message, retryable: true },
        authorization: error.authorization,
        audited: error.reason,
      };
    }
    if (error instanceof MissingClientCapability) {
      return {
        status: 'error',
        error: { code: 'missing_client_capability', message: redactMessage(error.message, secrets), retryable: false },
        requiredCapabilities: error.requiredCapabilities,
      };
    }
    if (error instanceof InputRequired) {
      return {
        status: INPUT_REQUIRED,
        error: { code: INPUT_REQUIRED, message: redactMessage(error.message, secrets), retryable: true },
        inputRequired: error.required,
      };
    }
    // An executor's AppError is a refusal: a 4xx about the call, or a 503 about the service (no sandbox).
    if (error instanceof AppError && (error.status < 500 || error.status === 503)) return error;
    // A tool's error may quote an argument (an endpoint echoing its body): redacted here, once, it is the same
    // in the answer, the audit row, the events, a stored outcome (approved or idempotent) and an MCP result.
    if (error instanceof ToolError) {
      const status = error.code === 'timeout' ? 'timeout' : 'error';
      return { status, error: { code: error.code, message: redactMessage(error.message, secrets), retryable: error.retryable } };
    }
    if (error instanceof WorkspaceFsError) {
      return {
        status: 'error',
        error: { code: error.code, message: redactMessage(error.message, secrets), retryable: error.code === 'io_error' },
      };
    }
    // An unexpected error may quote an argument: a redacted value never reaches the log.
    if (secrets.length === 0) this.logger.error(error instanceof Error ? error : String(error));
    else this.logger.error(redactMessage(error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error), secrets));
    return {
      status: 'error',
      error: { code: 'internal_error', message: 'The tool failed unexpectedly; the failure has been logged', retryable: false },
    };
  }
}

// Through a toolset, what the run answers the model names tools as the toolset shows them: an error's
// message, and a built-in's hints (a skill's result is its own data, left as it is).
function asShown(outcome: Outcome, call: ValidatedToolCall): Outcome {
  const renames = call.exposedAs?.renames;
  if (!renames || renames.size === 0) return outcome;
  if (outcome instanceof AppError) {
    const message = renameTools(outcome.message, renames);
    return message === outcome.message
      ? outcome
      : new AppError(outcome.status, outcome.code, message, { details: outcome.details, extra: outcome.extra, headers: outcome.headers });
  }
  const error = outcome.error && { ...outcome.error, message: renameTools(outcome.error.message, renames) };
  const builtin = call.tool.executor.definition.source === 'builtin';
  return {
    ...outcome,
    ...(error && { error }),
    ...(outcome.status === 'ok' && builtin && { result: renameInResult(outcome.result, renames) }),
  };
}
