import { Injectable } from '@nestjs/common';
import type { InvocationChannel } from '../audit/audit.repository.js';
import { CallAdmission } from '../budgets/call-admission.js';
import { callCost, LoopShare } from '../common/scheduling/loop-share.js';
import { UnreadAnswers } from '../budgets/unread-answers.js';
import { forbiddenByPolicy } from '../policy/policy.errors.js';
import { PolicyDecider } from '../policy/policy-decider.js';
import type { PolicyCall } from '../policy/policy-request.js';
import { CallParking } from './call-parking.js';
import { type Caller, type CallIdentity, CallRecorder, withPolicy } from './call-recorder.js';
import type { InvocationResultDto, PendingApprovalDto } from './dto/tool.dto.js';
import { type CallPrincipal, type ExposedAs, type RawToolCall, ToolCallGate, type ValidatedToolCall } from './tool-call.gate.js';
import { ToolRunner } from './tool-runner.js';

// What a call that was admitted answers: the outcome of its run, or its parking for approval.
export type ToolCallOutcome = InvocationResultDto | PendingApprovalDto;

export interface ApprovedCall {
  invocationId: string;
  tenantId: string;
  projectId: string;
  tool: string;
  channel: InvocationChannel;
  arguments: unknown;
  timeoutMs: number;
  startedAt: Date;
  // The key that asked (its tool binding was checked when the call was parked); its rows name it.
  requestedBy: Caller | null;
  // That key's role, as the policies judge the run (null: parked before roles were kept).
  requestedByRole: string | null;
  // The end user it was made for (Toolgate-User): the run acts as them, with their connections (null: none).
  user: string | null;
  // The directory of the workspace a toolset confined the call's paths to (null: none).
  pathPrefix: string | null;
  // The toolset the call was made through and the name the model called the tool by (null: none).
  exposed: { toolset: string; name: string } | null;
}

// Dispatches a tool call: the one path every call takes, whichever channel brought it (REST invoke, batch,
// MCP tools/call, toolsets, call_tool): the gate (project, tool, commands rate limit, arguments, workspace), then the policies' decision
// (forbid: refused; ask: parked), then either parking (a policy asks, or the project requires approval of the
// tool) or the run (deadline, cancellation, audit row with the channel and the decision, events). A refusal
// is an AppError; a tool that ran answers its outcome.
@Injectable()
export class CallDispatcher {
  constructor(
    private readonly gate: ToolCallGate,
    private readonly runner: ToolRunner,
    private readonly parking: CallParking,
    private readonly policies: PolicyDecider,
    private readonly recorder: CallRecorder,
    private readonly admission: CallAdmission,
    private readonly unread: UnreadAnswers,
    private readonly share: LoopShare,
  ) {}

  // `controller` is aborted when the client goes away; the run aborts it too at the deadline.
  // Each call holds a place in its tenant's concurrentCalls budget from before the gate until it answers, and
  // starts only while the tenant's answers held unread are within unreadAnswerBytes, and when its tenant's
  // share of the event loop allows (LoopShare), which is charged what the call cost.
  async dispatch(request: RawToolCall, controller: AbortController): Promise<ToolCallOutcome> {
    const release = await this.admission.admit(request.tenantId);
    try {
      const waiting = this.unread.check(request.tenantId);
      if (waiting) await waiting;
      // What ran is charged by its result and, for a command, by how long it ran; a refusal or a parked call as
      // a small call.
      let cost = callCost(0);
      return await this.share.run(
        request.tenantId,
        async () => {
          const call = await this.decided(await this.gate.admit(request));
          if (call.policy?.effect === 'ask' || this.parking.needsApproval(call)) return await this.parking.park(call);
          const outcome = await this.runner.run(call, controller);
          cost = callCost(call.resultBytes ?? 0, call.tool.executor.spawnsProcesses === true ? outcome.durationMs : 0);
          return outcome;
        },
        () => cost,
        controller.signal,
      );
    } finally {
      release();
    }
  }

  // An approved parked call: through the gate again (the tool or the workspace may have changed since), and
  // decided again (a policy set since may forbid it; one that asks was answered by the approval), then run
  // under its own id, with a controller of its own: nobody's connection carries it.
  async dispatchApproved(call: ApprovedCall): Promise<InvocationResultDto> {
    const requester = call.requestedBy?.name ?? '';
    const principal: CallPrincipal = {
      apiKeyId: call.requestedBy?.keyId ?? '',
      keyName: requester,
      tools: null,
      // A call parked before roles were kept is judged as the least a caller can be.
      role: call.requestedByRole ?? 'agent',
      oauthClient: requester.endsWith(' (OAuth)') ? requester.slice(0, -' (OAuth)'.length) : null,
      ...(call.user !== null && { user: call.user }),
    };
    const admitted = await this.gate.admit(
      {
        tenantId: call.tenantId,
        projectId: call.projectId,
        principal,
        toolName: call.tool,
        body: { arguments: call.arguments, timeoutMs: call.timeoutMs },
        channel: call.channel,
      },
      {
        invocationId: call.invocationId,
        startedAt: call.startedAt,
        caller: call.requestedBy,
        pathPrefix: call.pathPrefix,
        exposedAs: exposedAs(call),
      },
    );
    return this.runner.run(await this.decided(admitted), new AbortController());
  }

  // The one decision before a call runs; a forbidden call is audited with the policies that forbade it.
  private async decided(call: ValidatedToolCall): Promise<ValidatedToolCall> {
    const policy = await this.policies.decide(call.tenantId, policyCallOf(call));
    call.policy = policy;
    if (policy?.effect !== 'forbid') return call;
    const refusal = forbiddenByPolicy(policy.policies);
    const name = call.tool.executor.definition.name;
    const identity: CallIdentity = withPolicy(
      {
        tenantId: call.tenantId,
        projectId: call.projectId,
        invocationId: call.invocationId,
        tool: name,
        channel: call.channel,
        caller: call.caller,
      },
      policy,
    );
    if (call.exposedAs) {
      identity.toolset = call.exposedAs.toolset;
      identity.exposedTool = call.exposedAs.name;
    }
    await this.recorder.finished(identity, {
      status: 'denied',
      error: { code: refusal.code, message: refusal.message },
      arguments: call.redacted,
      startedAt: call.startedAt,
    });
    throw refusal;
  }
}

function policyCallOf(call: ValidatedToolCall): PolicyCall {
  return {
    projectId: call.projectId,
    principal: {
      keyId: call.principal.apiKeyId,
      keyName: call.principal.keyName,
      role: call.principal.role,
      oauthClient: call.principal.oauthClient ?? null,
    },
    executor: call.tool.executor,
    exposed: call.exposedAs ? { toolset: call.exposedAs.toolset, name: call.exposedAs.name } : null,
    args: call.args,
    channel: call.channel,
    workspace: call.workspace,
    pathPrefix: call.pathPrefix,
    now: new Date(),
  };
}

// An approved call answers as it was made: under the name the model called it by, with that name in its texts
// (the other names the toolset gave are not known now, and not needed: the call names one tool).
function exposedAs(call: ApprovedCall): ExposedAs | null {
  if (!call.exposed) return null;
  const renames = call.exposed.name === call.tool ? new Map<string, string>() : new Map([[call.tool, call.exposed.name]]);
  return { ...call.exposed, renames };
}
