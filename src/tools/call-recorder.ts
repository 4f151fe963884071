import { Injectable } from '@nestjs/common';
import type { InvocationChannel, InvocationStatus } from '../audit/audit.repository.js';
import { AuditService } from '../audit/audit.service.js';
import { ToolEvents } from './events/tool-events.js';
import { Metrics } from '../metrics/metrics.js';
import { currentTraceId, inSpan, tracingEnabled } from '../common/tracing/tracer.js';
import type { AuditEntry } from '../audit/audit.service.js';
import type { RedactedArguments } from '../execution/validation/argument-redaction.js';
import { redactMessage } from '../common/secrets/secret-redaction.js';

export const TOOL_ARG_VALIDATION_FAILURE = 'TOOL_ARG_VALIDATION_FAILURE';

export interface CallIdentity {
  tenantId: string;
  projectId: string;
  invocationId: string;
  tool: string;
  channel: InvocationChannel;
  // A call through a toolset: its slug and the name the model used (`tool` is the real tool).
  toolset?: string;
  exposedTool?: string;
  // The key that made the call; null only for a call parked before its requester was recorded.
  caller: Caller | null;
  // What the policies decided before the call ran, and the ids of the policies that determined it.
  policy?: { decision: string; ids: string[] };
  // The end user the call was made for (Toolgate-User).
  user?: string;
}

// A decided call's identity carries its decision into every row it writes.
export function withPolicy(
  identity: CallIdentity,
  policy: { effect: string; policies: ReadonlyArray<{ id: string }> } | null | undefined,
): CallIdentity {
  if (policy) identity.policy = { decision: policy.effect, ids: policy.policies.map((p) => p.id) };
  return identity;
}

// Who made a call: the calling key's id and name (an OAuth access token's is "<client> (OAuth)"). The name
// is null for a call parked before names were kept whose key is gone.
export interface Caller {
  keyId: string;
  name: string | null;
}

// Who decided a parked call: the deciding key.
export interface DecidedBy {
  keyId: string;
  name: string;
}

// What an audit row says of the call beside who made it (CallRecorder.entry).
type RowOutcome = Omit<
  AuditEntry,
  | 'id'
  | 'tenantId'
  | 'projectId'
  | 'tool'
  | 'channel'
  | 'toolset'
  | 'exposedTool'
  | 'callerKeyId'
  | 'callerName'
  | 'user'
  | 'traceId'
  | 'policyDecision'
  | 'policyIds'
>;

export interface CallOutcome {
  status: InvocationStatus;
  event?: string;
  error?: { code: string; message: string };
  // Already redacted (tool-call.pipe.ts): the raw values never get this far.
  arguments: RedactedArguments;
  startedAt: Date;
}

// Records a call: its start (the event), and its end exactly once (one audit row, the metrics, then the event a
// dashboard sees).
@Injectable()
export class CallRecorder {
  constructor(
    private readonly audit: AuditService,
    private readonly events: ToolEvents,
    private readonly metrics: Metrics,
  ) {}

  started(call: CallIdentity): void {
    if (this.events.watched(call.tenantId, call.projectId)) this.events.emit({ type: 'tool.started', ...call });
  }

  // A call parked for approval: its audit row says pending_approval until the decision replaces it.
  async parked(call: CallIdentity, args: RedactedArguments, startedAt: Date): Promise<void> {
    await this.write(
      this.entry(call, {
        status: 'pending_approval',
        event: null,
        errorCode: null,
        errorMessage: null,
        durationMs: 0,
        arguments: args.value,
        redactedPaths: args.paths,
        startedAt,
        finishedAt: startedAt,
      }),
    );
    this.events.emit({ type: 'tool.pending', ...call, status: 'pending_approval' });
  }

  // A parked call denied or expired: it never ran. The arguments stay as the pending row has them.
  async refusedParked(
    call: CallIdentity,
    status: 'denied' | 'expired',
    error: { code: string; message: string },
    startedAt: Date,
    decidedBy?: DecidedBy,
  ): Promise<void> {
    const finishedAt = new Date();
    const durationMs = finishedAt.getTime() - startedAt.getTime();
    // The denial's reason is a person's text: credentials pasted into it are not kept either.
    const shown = { ...error, message: redactMessage(error.message) };
    await this.write(
      this.entry(call, {
        status,
        event: null,
        errorCode: shown.code,
        errorMessage: shown.message,
        durationMs,
        arguments: null,
        redactedPaths: [],
        startedAt,
        finishedAt,
      }),
    );
    this.events.emit({ type: 'tool.denied', ...call, status, error: shown, durationMs, ...(decidedBy && { decidedBy }) });
  }

  // An approved call whose instance stopped before it stored the outcome: the pending row becomes the error
  // the parked call answers. A row the run did write is final and stays (see AuditRepository.insertMany).
  async lostParked(call: CallIdentity, error: { code: string; message: string }, startedAt: Date): Promise<void> {
    const finishedAt = new Date();
    const durationMs = finishedAt.getTime() - startedAt.getTime();
    await this.write(
      this.entry(call, {
        status: 'error',
        event: null,
        errorCode: error.code,
        errorMessage: error.message,
        durationMs,
        arguments: null,
        redactedPaths: [],
        startedAt,
        finishedAt,
      }),
    );
    this.events.emit({ type: 'tool.result', ...call, status: 'error', error, durationMs });
  }

  // The outcome of an approved call; its error was redacted where it was made (ToolRunner, the gate).
  result(
    call: CallIdentity,
    status: string,
    durationMs: number,
    error: { code: string; message: string } | undefined,
    decidedBy: DecidedBy,
  ): void {
    const shown = error && { ...error, message: redactMessage(error.message) };
    this.events.emit({ type: 'tool.result', ...call, status, error: shown, durationMs, decidedBy });
  }

  // Labels stay bounded: a name that matched no tool is `unknown`, a skill tool `skill` (see Metrics).
  private count(call: CallIdentity, outcome: CallOutcome, durationMs: number): void {
    const code = outcome.error?.code;
    const label = this.metrics.toolLabel(call.tool, code !== 'tool_not_found');
    this.metrics.callFinished(label, outcome.status, call.channel, durationMs);
    if (code === 'invalid_arguments') this.metrics.validationRefused(label);
    else if (code === 'sandbox_failed') this.metrics.sandboxSetupFailed();
  }

  // A call's audit entry, written out in one literal: copying objects through spreads was most of the
  // audit's share of a refused call's CPU.
  private entry(call: CallIdentity, row: RowOutcome): AuditEntry {
    return {
      id: call.invocationId,
      tenantId: call.tenantId,
      projectId: call.projectId,
      tool: call.tool,
      channel: call.channel,
      toolset: call.toolset ?? null,
      exposedTool: call.exposedTool ?? null,
      callerKeyId: call.caller?.keyId ?? null,
      callerName: call.caller?.name ?? null,
      policyDecision: call.policy?.decision ?? null,
      policyIds: call.policy?.ids ?? null,
      user: call.user ?? null,
      status: row.status,
      event: row.event,
      errorCode: row.errorCode,
      errorMessage: row.errorMessage,
      durationMs: row.durationMs,
      arguments: row.arguments,
      redactedPaths: row.redactedPaths,
      startedAt: row.startedAt,
      finishedAt: row.finishedAt,
    };
  }

  // The audit row carries the trace id of the span the call ran in (null with tracing off). Its span covers
  // the queuing; the insert itself is batched with other calls' rows (see the audit metrics).
  private write(entry: AuditEntry): Promise<void> {
    if (!tracingEnabled()) return this.audit.record(entry);
    entry.traceId = currentTraceId();
    return inSpan('toolgate.audit', { 'toolgate.tool': entry.tool, 'toolgate.status': entry.status }, () => this.audit.record(entry));
  }

  // Every call, refused or run, ends here.
  async finished(call: CallIdentity, outcome: CallOutcome): Promise<number> {
    const finishedAt = new Date();
    const durationMs = finishedAt.getTime() - outcome.startedAt.getTime();
    // A message may quote a redacted value (a validation error names what it got): it is blanked there too,
    // with anything else in it that looks like a credential.
    const error = outcome.error && { ...outcome.error, message: redactMessage(outcome.error.message, outcome.arguments.secrets) };
    this.count(call, outcome, durationMs);
    await this.write(
      this.entry(call, {
        status: outcome.status,
        event: outcome.event ?? null,
        errorCode: error?.code ?? null,
        errorMessage: error?.message ?? null,
        durationMs,
        arguments: outcome.arguments.value,
        redactedPaths: outcome.arguments.paths,
        startedAt: outcome.startedAt,
        finishedAt,
      }),
    );
    if (this.events.watched(call.tenantId, call.projectId)) {
      this.events.emit({
        type: outcome.status === 'ok' ? 'tool.completed' : 'tool.error',
        ...call,
        status: outcome.status,
        error,
        durationMs,
      });
    }
    return durationMs;
  }
}
