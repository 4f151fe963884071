import { Inject, Injectable } from '@nestjs/common';
import { ParkedCallsRepository } from '../audit/parked-calls.repository.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { PendingApprovalDto } from './dto/tool.dto.js';
import { InFlightCalls } from './in-flight-calls.js';
import { InvocationRecorder, withPolicy } from './invocation-recorder.js';
import type { ToolExecutor } from '../execution/tool-definition.js';
import { approvalEntryCovers } from './tool-classes.js';
import type { ValidatedToolCall } from './tool-call.gate.js';

// Whether a call of `executor`'s tool by this key waits for a person. An entry is a tool name, a name ending
// in `*`, or a class (tool-classes.ts). Each tool is judged on its own: ["read_file"] does not park
// read_multiple_files, which reads too; name both, or a class. A key that parks every call (an OAuth client
// an approver signed in) parks whatever the tool. Also asked of what is offered without a call (MCP
// listings of files and of sources), which a key whose calls would park must not get.
export function callWouldPark(principal: { parksEveryCall?: boolean }, approvalRequired: readonly string[], executor: ToolExecutor): boolean {
  if (principal.parksEveryCall === true) return true;
  return approvalRequired.some((entry) => approvalEntryCovers(entry, executor));
}

// Parks a validated call whose tool the project requires a person to approve (or a policy asks for one): stored with its
// arguments until decided (APPROVAL_TIMEOUT_MS), audited as pending_approval, announced as tool.pending.
// Nothing of it runs here; src/calls/approvals.service.ts runs or refuses it on the decision.
@Injectable()
export class CallParking {
  constructor(
    private readonly parked: ParkedCallsRepository,
    private readonly recorder: InvocationRecorder,
    private readonly inFlight: InFlightCalls,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  needsApproval(call: ValidatedToolCall): boolean {
    return callWouldPark(call.principal, call.settings.approvalRequired, call.tool.executor);
  }

  async park(call: ValidatedToolCall): Promise<PendingApprovalDto> {
    // A service shutting down takes no new work, parked or not.
    this.inFlight.admit();
    const tool = call.tool.executor.definition.name;
    const expiresAt = new Date(call.startedAt.getTime() + this.config.calls.approvalTimeoutMs);
    await this.parked.create({
      id: call.invocationId,
      tenantId: call.tenantId,
      projectId: call.projectId,
      tool,
      channel: call.channel,
      arguments: call.args,
      timeoutMs: call.timeoutMs,
      startedAt: call.startedAt,
      expiresAt,
      requestedByKeyId: call.principal.apiKeyId,
      requestedByName: call.principal.keyName,
      requestedByRole: call.principal.role,
      pathPrefix: call.pathPrefix,
      toolset: call.exposedAs?.toolset ?? null,
      exposedTool: call.exposedAs?.name ?? null,
    });
    const identity = withPolicy({ tenantId: call.tenantId, projectId: call.projectId, invocationId: call.invocationId, tool, channel: call.channel, caller: call.caller }, call.policy);
    if (call.exposedAs) {
      identity.toolset = call.exposedAs.toolset;
      identity.exposedTool = call.exposedAs.name;
    }
    await this.recorder.parked(identity, call.redacted, call.startedAt);
    // Through a toolset, the name the model called it by (the audit row names both).
    return { invocationId: call.invocationId, tool: call.exposedAs?.name ?? tool, status: 'pending_approval', expiresAt: expiresAt.toISOString() };
  }
}
