import { Injectable } from '@nestjs/common';
import type { InvocationChannel } from '../audit/audit.repository.js';
import { CallParking } from './call-parking.js';
import type { Caller } from './invocation-recorder.js';
import type { InvocationResultDto, PendingApprovalDto } from './dto/tool.dto.js';
import { type ExposedAs, type RawToolCall, ToolCallGate } from './tool-call.gate.js';
import { ToolInvocationService } from './tool-invocation.service.js';

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
  // The directory of the workspace a toolset confined the call's paths to (null: none).
  pathPrefix: string | null;
  // The toolset the call was made through and the name the model called the tool by (null: none).
  exposed: { toolset: string; name: string } | null;
}

// The one path a tool call takes, whichever channel brought it (REST invoke, batch, MCP tools/call): the
// gate (project, tool, commands rate limit, arguments, workspace), then either parking (the project requires
// approval of the tool) or the run (deadline, cancellation, audit row with the channel, events). A refusal
// is an AppError; a tool that ran answers its outcome.
@Injectable()
export class ToolCallsService {
  constructor(
    private readonly gate: ToolCallGate,
    private readonly invocations: ToolInvocationService,
    private readonly parking: CallParking,
  ) {}

  // `controller` is aborted when the client goes away; the run aborts it too at the deadline.
  async call(request: RawToolCall, controller: AbortController): Promise<ToolCallOutcome> {
    const call = await this.gate.admit(request);
    if (this.parking.needsApproval(call)) return this.parking.park(call);
    return this.invocations.invoke(call, controller);
  }

  // An approved parked call: through the gate again (the tool or the workspace may have changed since),
  // then run under its own id, with a controller of its own: nobody's connection carries it.
  async runApproved(call: ApprovedCall): Promise<InvocationResultDto> {
    const admitted = await this.gate.admit(
      {
        tenantId: call.tenantId,
        projectId: call.projectId,
        principal: { apiKeyId: call.requestedBy?.keyId ?? '', keyName: call.requestedBy?.name ?? '', tools: null },
        toolName: call.tool,
        body: { arguments: call.arguments, timeoutMs: call.timeoutMs },
        channel: call.channel,
      },
      { invocationId: call.invocationId, startedAt: call.startedAt, caller: call.requestedBy, pathPrefix: call.pathPrefix, exposedAs: exposedAs(call) },
    );
    return this.invocations.invoke(admitted, new AbortController());
  }
}

// An approved call answers as it was made: under the name the model called it by, with that name in its texts
// (the other names the toolset gave are not known now, and not needed: the call names one tool).
function exposedAs(call: ApprovedCall): ExposedAs | null {
  if (!call.exposed) return null;
  const renames = call.exposed.name === call.tool ? new Map<string, string>() : new Map([[call.tool, call.exposed.name]]);
  return { ...call.exposed, renames };
}
