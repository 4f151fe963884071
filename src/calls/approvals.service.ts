import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { InvocationChannel } from '../audit/audit.repository.js';
import { AuditService } from '../audit/audit.service.js';
import { ParkedCallsRepository } from '../audit/parked-calls.repository.js';
import { AppError } from '../common/errors/app-error.js';
import { redactMessage } from '../common/secrets/secret-redaction.js';
import { ApprovalNotices } from '../approval-routes/approval-notices.js';
import { argumentsDigest } from '../common/json/arguments-digest.js';
import {
  approvalArgumentsChanged,
  approvalAlreadyDecided,
  approvalExpired,
  approvalNotFound,
  approvalRequesterEnded,
  approvalSelfDecision,
} from './calls.errors.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { ParkedCall } from '../generated/prisma/client.js';
import { InFlightCalls } from '../tools/in-flight-calls.js';
import { type CallIdentity, CallRecorder } from '../tools/call-recorder.js';
import { CallDispatcher } from '../tools/call-dispatcher.js';
import { refusedCallStatus } from '../tools/tools.errors.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import type { DecisionResponseDto } from './dto/approval.dto.js';

const EXPIRE_BATCH = 100;
const PRUNE_BATCH = 1000;
// The reason a withdrawn call keeps (its decider is the key that made it).
const WITHDRAWN = 'withdrawn by the key that made it';
// An approved call still unfinished this long after its decision is past any deadline (120 s at most) and
// any retried write of its outcome: its instance stopped.
const ABANDONED_AFTER_MS = 10 * 60_000;

// The decision on a parked call, taken once: approve runs it (through the gate again, under its own id and
// audit row), deny refuses it; either way its audit row, the event stream (tool.result / tool.denied) and
// GET .../invocations/{id} tell the caller. A call not decided within APPROVAL_TIMEOUT_MS expires and
// never runs. Parked calls live in the database: they survive a restart and any instance can decide them.
@Injectable()
export class ApprovalsService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Approvals');
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly parked: ParkedCallsRepository,
    private readonly dispatcher: CallDispatcher,
    private readonly registry: ToolRegistry,
    private readonly recorder: CallRecorder,
    private readonly audit: AuditService,
    private readonly inFlight: InFlightCalls,
    private readonly notices: ApprovalNotices,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    const every = Math.min(30_000, Math.max(50, Math.floor(this.config.calls.approvalTimeoutMs / 4)));
    this.sweeper = setInterval(() => void this.expireDue(), every);
    this.sweeper.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }

  // `digest`: the argumentsDigest the approver saw; arguments that no longer have it are not run (409), and
  // the call stays pending for a decision on what it holds.
  async approve(
    tenantId: string,
    projectId: string,
    invocationId: string,
    reason: string | null,
    decider: Decider,
    digest: string | null = null,
  ): Promise<DecisionResponseDto> {
    await this.registry.forProject(tenantId, projectId);
    // Not while shutting down: an approved call must run, not be refused for a reason the approver cannot fix.
    this.inFlight.admit();
    const { call: pending, requesterActive } = await this.checkDecider(tenantId, projectId, invocationId, decider);
    // A revoked or expired credential's calls die with it: revoking a leaked key (or an OAuth consent) must
    // not leave its queue to be run by the next person who approves.
    if (pending?.status === 'pending' && !requesterActive) {
      await this.refuse(tenantId, projectId, invocationId, 'the key that made it was revoked or has expired', decider);
      throw approvalRequesterEnded();
    }
    if (digest !== null && pending?.status === 'pending') {
      const held = argumentsDigest(pending.arguments);
      if (held !== digest) throw approvalArgumentsChanged(held);
    }
    const call = await this.parked.decide(tenantId, projectId, invocationId, 'approved', reason, decider);
    if (!call) throw await this.whyNot(tenantId, projectId, invocationId);
    await this.announce(call, 'approved', decider);
    // The pending row must be written before the row that replaces it.
    await this.audit.flush();
    await this.audit.markDecided(call.tenantId, call.id, call.startedAt, decider);
    const identity = identityOf(call);
    let outcome: Record<string, unknown>;
    try {
      const result = await this.dispatcher.dispatchApproved({
        ...identity,
        arguments: call.arguments,
        timeoutMs: call.timeoutMs,
        startedAt: call.startedAt,
        requestedBy: identity.caller,
        requestedByRole: call.requestedByRole,
        user: call.user,
        pathPrefix: call.pathPrefix,
        exposed: call.toolset !== null && call.exposedTool !== null ? { toolset: call.toolset, name: call.exposedTool } : null,
      });
      outcome = { ...result };
      this.recorder.result(identity, result.status, result.durationMs, result.error, decidedBy(decider));
    } catch (error) {
      if (!(error instanceof AppError)) {
        await this.parked.finish(call, {
          invocationId: call.id,
          tool: shownName(call),
          status: 'error',
          error: { code: 'internal_error', message: 'The call failed unexpectedly' },
        });
        throw error;
      }
      // Refused when admitted again (the tool was removed, the workspace moved): it did not run.
      const refusal = { code: error.code, message: error.message };
      outcome = { invocationId: call.id, tool: shownName(call), status: refusedCallStatus(error), error: refusal };
      this.recorder.result(identity, outcome.status as string, 0, refusal, decidedBy(decider));
    }
    // As stored: finish cannot fail on what the tool answered, and a run is answered with its outcome.
    outcome = await this.parked.finish(call, outcome);
    return { invocationId: call.id, decision: 'approved', decidedBy: decidedBy(decider), outcome };
  }

  async deny(
    tenantId: string,
    projectId: string,
    invocationId: string,
    reason: string | null,
    decider: Decider,
  ): Promise<DecisionResponseDto> {
    await this.registry.forProject(tenantId, projectId);
    await this.checkDecider(tenantId, projectId, invocationId, decider);
    return this.refuse(tenantId, projectId, invocationId, reason, decider);
  }

  // The key that made a parked call takes it back before anyone decides it (MCP tasks/cancel): denied by
  // that key itself, audited and announced as a denial, with its own code. Null when it was not pending.
  async withdraw(tenantId: string, projectId: string, invocationId: string, requester: Decider): Promise<DecisionResponseDto | null> {
    const pending = await this.parked.findById(tenantId, projectId, invocationId);
    if (pending?.status !== 'pending' || pending.requestedByKeyId !== requester.keyId) return null;
    const call = await this.parked.decide(tenantId, projectId, invocationId, 'denied', WITHDRAWN, requester);
    if (!call) return null;
    const error = { code: 'approval_withdrawn', message: 'The key that made this call withdrew it before anyone decided. It did not run.' };
    return this.recordDenial(call, error, requester);
  }

  // The denial itself, once the decider may decide.
  private async refuse(
    tenantId: string,
    projectId: string,
    invocationId: string,
    reason: string | null,
    decider: Decider,
  ): Promise<DecisionResponseDto> {
    const call = await this.parked.decide(tenantId, projectId, invocationId, 'denied', reason, decider);
    if (!call) throw await this.whyNot(tenantId, projectId, invocationId);
    // The reason is a person's text: a credential pasted into it is redacted in the answer, the stored
    // outcome, the audit row and the event alike.
    const error = {
      code: 'approval_denied',
      message: reason
        ? redactMessage(`A person denied this call: ${reason}. It did not run.`)
        : 'A person denied this call. It did not run.',
    };
    return this.recordDenial(call, error, decider);
  }

  private async recordDenial(call: ParkedCall, error: { code: string; message: string }, decider: Decider): Promise<DecisionResponseDto> {
    await this.announce(call, 'denied', decider);
    await this.audit.flush();
    await this.recorder.refusedParked(identityOf(call), 'denied', error, call.startedAt, decidedBy(decider));
    await this.audit.flush();
    await this.audit.markDecided(call.tenantId, call.id, call.startedAt, decider);
    const outcome = { invocationId: call.id, tool: shownName(call), status: 'denied', error };
    await this.parked.setOutcome(call.id, outcome);
    return { invocationId: call.id, decision: 'denied', decidedBy: decidedBy(decider), outcome };
  }

  // Separation of duties: whatever its role, the key that made a call never decides it, nor does the key
  // that consented to the OAuth client whose token made it (else an approver could sign a client in and
  // approve its own agent's calls). The requester never changes, so checking before the conditional update
  // leaves no window.
  // Answers the call and whether the key that made it still works.
  private async checkDecider(
    tenantId: string,
    projectId: string,
    invocationId: string,
    decider: Decider,
  ): Promise<{ call: ParkedCall | null; requesterActive: boolean }> {
    const call = await this.parked.findById(tenantId, projectId, invocationId);
    if (!call?.requestedByKeyId) return { call, requesterActive: true };
    if (call.requestedByKeyId === decider.keyId) throw approvalSelfDecision();
    const requester = await this.parked.requester(call.requestedByKeyId);
    if (requester.consentedByKeyId === decider.keyId) throw approvalSelfDecision();
    return { call, requesterActive: requester.active };
  }

  // Expires what is due (each call once, whichever instance gets it), then says why this one was not pending.
  private async whyNot(tenantId: string, projectId: string, invocationId: string): Promise<AppError> {
    const call = await this.parked.findById(tenantId, projectId, invocationId);
    if (!call) return approvalNotFound(invocationId);
    if (call.status === 'pending') await this.expireDue();
    const status = call.status === 'pending' ? 'expired' : call.status;
    if (status === 'expired') return approvalExpired(this.config.calls.approvalTimeoutMs);
    return approvalAlreadyDecided(status === 'denied' ? 'denied' : 'approved');
  }

  async expireDue(): Promise<void> {
    try {
      await this.finishAbandoned();
      await this.pruneDecided();
      for (;;) {
        const expired = await this.parked.expireDue(EXPIRE_BATCH);
        if (expired.length === 0) return;
        await this.audit.flush();
        for (const call of expired) {
          const error = {
            code: 'approval_expired',
            message: `Nobody approved this call within ${this.config.calls.approvalTimeoutMs} ms; it expired and did not run.`,
          };
          await this.recorder.refusedParked(identityOf(call), 'expired', error, call.startedAt);
          await this.parked.setOutcome(call.id, { invocationId: call.id, tool: shownName(call), status: 'expired', error });
          await this.announce(call, 'expired', null);
        }
        if (expired.length < EXPIRE_BATCH) return;
      }
    } catch (error) {
      this.logger.warn(`Expiring parked calls failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  // approval.decided to the project's approval routes (queued; sending never holds up the decision).
  private announce(call: ParkedCall, decision: 'approved' | 'denied' | 'expired', decider: Decider | null): Promise<void> {
    return this.notices.decided({
      tenantId: call.tenantId,
      projectId: call.projectId,
      invocationId: call.id,
      tool: call.tool,
      toolset: call.toolset,
      decision,
      decidedBy: decider,
      reason: decision === 'expired' ? null : call.reason,
      decidedAt: call.decidedAt ?? new Date(),
      argumentsDigest: call.argumentsDigest,
    });
  }

  // Outcomes of calls decided longer ago than a stored answer is kept (IDEMPOTENCY_TTL_HOURS) go, so that
  // what a tenant parked does not hold its storedAnswerBytes forever.
  private async pruneDecided(): Promise<void> {
    while ((await this.parked.pruneDecided(this.config.calls.idempotencyTtlMs, PRUNE_BATCH)) === PRUNE_BATCH);
  }

  // An approved call whose instance stopped before it stored the outcome reaches a final state all the same.
  private async finishAbandoned(): Promise<void> {
    for (const { call, error } of await this.parked.finishAbandoned(ABANDONED_AFTER_MS, EXPIRE_BATCH)) {
      this.logger.warn(`Approved call ${call.id} (${call.tool}) never stored its outcome; it is finished as outcome_lost`);
      await this.recorder.lostParked(identityOf(call), error, call.startedAt);
    }
  }
}

// Who decided: the deciding key's id and name.
export interface Decider {
  keyId: string;
  name: string;
}

const decidedBy = (decider: Decider) => ({ keyId: decider.keyId, name: decider.name });

function identityOf(call: ParkedCall): CallIdentity {
  const caller = call.requestedByKeyId === null ? null : { keyId: call.requestedByKeyId, name: call.requestedByName };
  const identity: CallIdentity = {
    tenantId: call.tenantId,
    projectId: call.projectId,
    invocationId: call.id,
    tool: call.tool,
    channel: call.channel as InvocationChannel,
    caller,
  };
  if (call.user !== null) identity.user = call.user;
  // Through a toolset, its events name it and the name the model used, as the pending one did.
  if (call.toolset !== null) identity.toolset = call.toolset;
  if (call.exposedTool !== null) identity.exposedTool = call.exposedTool;
  return identity;
}

// The tool as the caller named it: a stored outcome is what the call answers (through a toolset, the exposed name).
const shownName = (call: ParkedCall) => call.exposedTool ?? call.tool;
