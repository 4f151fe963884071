import { Injectable } from '@nestjs/common';
import type { InvocationChannel, InvocationStatus } from '../audit/audit.repository.js';
import { AuditService } from '../audit/audit.service.js';
import { ToolEvents } from './events/tool-events.js';
import { type RedactedArguments, scrubSecrets } from '../execution/validation/argument-redaction.js';

export const TOOL_ARG_VALIDATION_FAILURE = 'TOOL_ARG_VALIDATION_FAILURE';

export interface CallIdentity {
  tenantId: string;
  projectId: string;
  invocationId: string;
  tool: string;
  channel: InvocationChannel;
}

export interface CallOutcome {
  status: InvocationStatus;
  event?: string;
  error?: { code: string; message: string };
  // Already redacted (tool-call.pipe.ts): the raw values never get this far.
  arguments: RedactedArguments;
  startedAt: Date;
}

// Every call ends here exactly once: one audit row, then the event a dashboard sees.
@Injectable()
export class InvocationRecorder {
  constructor(
    private readonly audit: AuditService,
    private readonly events: ToolEvents,
  ) {}

  started(call: CallIdentity): void {
    this.events.emit({ type: 'tool.started', ...call });
  }

  // A call parked for approval: its audit row says pending_approval until the decision replaces it.
  async parked(call: CallIdentity, args: RedactedArguments, startedAt: Date): Promise<void> {
    await this.audit.record({
      ...this.row(call),
      status: 'pending_approval',
      event: null,
      errorCode: null,
      errorMessage: null,
      durationMs: 0,
      arguments: args.value,
      redactedPaths: args.paths,
      startedAt,
      finishedAt: startedAt,
    });
    this.events.emit({ type: 'tool.pending', ...call, status: 'pending_approval' });
  }

  // A parked call denied or expired: it never ran. The arguments stay as the pending row has them.
  async refusedParked(call: CallIdentity, status: 'denied' | 'expired', error: { code: string; message: string }, startedAt: Date): Promise<void> {
    const finishedAt = new Date();
    const durationMs = finishedAt.getTime() - startedAt.getTime();
    await this.audit.record({
      ...this.row(call),
      status,
      event: null,
      errorCode: error.code,
      errorMessage: error.message,
      durationMs,
      arguments: null,
      redactedPaths: [],
      startedAt,
      finishedAt,
    });
    this.events.emit({ type: 'tool.denied', ...call, status, error, durationMs });
  }

  result(call: CallIdentity, status: string, durationMs: number, error?: { code: string; message: string }): void {
    this.events.emit({ type: 'tool.result', ...call, status, error, durationMs });
  }

  private row(call: CallIdentity) {
    return { id: call.invocationId, tenantId: call.tenantId, projectId: call.projectId, tool: call.tool, channel: call.channel };
  }

  async finished(call: CallIdentity, outcome: CallOutcome): Promise<number> {
    const finishedAt = new Date();
    const durationMs = finishedAt.getTime() - outcome.startedAt.getTime();
    const { secrets } = outcome.arguments;
    // A message may quote a redacted value (a validation error names what it got): it is blanked there too.
    const error = outcome.error && secrets.length > 0 ? { code: outcome.error.code, message: scrubSecrets(outcome.error.message, secrets) } : outcome.error;
    await this.audit.record({
      id: call.invocationId,
      tenantId: call.tenantId,
      projectId: call.projectId,
      tool: call.tool,
      channel: call.channel,
      status: outcome.status,
      event: outcome.event ?? null,
      errorCode: error?.code ?? null,
      errorMessage: error?.message ?? null,
      durationMs,
      arguments: outcome.arguments.value,
      redactedPaths: outcome.arguments.paths,
      startedAt: outcome.startedAt,
      finishedAt,
    });
    this.events.emit({
      type: outcome.status === 'ok' ? 'tool.completed' : 'tool.error',
      ...call,
      status: outcome.status,
      error,
      durationMs,
    });
    return durationMs;
  }
}
