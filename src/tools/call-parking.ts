import { Inject, Injectable } from '@nestjs/common';
import { ApprovalNotices } from '../approval-routes/approval-notices.js';
import { ParkedCallsRepository } from '../audit/parked-calls.repository.js';
import { argumentsDigest } from '../common/json/arguments-digest.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { tenantBudgetExceeded } from '../budgets/budgets.errors.js';
import { BudgetsRepository } from '../budgets/budgets.repository.js';
import { TenantBudgets } from '../budgets/tenant-budgets.js';
import { AppError } from '../common/errors/app-error.js';
import { tenantNotFound } from '../tenants/tenants.errors.js';
import type { PendingApprovalDto } from './dto/tool.dto.js';
import { InFlightCalls } from './in-flight-calls.js';
import { CallRecorder, withPolicy } from './call-recorder.js';
import type { ToolExecutor } from '../execution/tool-definition.js';
import { approvalEntryCovers } from './tool-classes.js';
import type { ValidatedToolCall } from './tool-call.gate.js';

// Whether a call of `executor`'s tool by this key waits for a person. An entry is a tool name, a name ending
// in `*`, or a class (tool-classes.ts). Each tool is judged on its own: ["read_file"] does not park
// read_multiple_files, which reads too; name both, or a class. A key that parks every call (an OAuth client
// an approver signed in) parks whatever the tool. Also asked of what is offered without a call (MCP
// listings of files and of sources), which a key whose calls would park must not get.
export function callWouldPark(
  principal: { parksEveryCall?: boolean },
  approvalRequired: readonly string[],
  executor: ToolExecutor,
): boolean {
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
    private readonly recorder: CallRecorder,
    private readonly inFlight: InFlightCalls,
    private readonly notices: ApprovalNotices,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly budgets: TenantBudgets,
    private readonly budgetLocks: BudgetsRepository,
  ) {}

  needsApproval(call: ValidatedToolCall): boolean {
    return callWouldPark(call.principal, call.settings.approvalRequired, call.tool.executor);
  }

  async park(call: ValidatedToolCall): Promise<PendingApprovalDto> {
    // A service shutting down takes no new work, parked or not.
    this.inFlight.admit();
    const tool = call.tool.executor.definition.name;
    const expiresAt = new Date(call.startedAt.getTime() + this.config.calls.approvalTimeoutMs);
    const digest = argumentsDigest(call.args);
    const row = {
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
      user: call.principal.user ?? null,
      pathPrefix: call.pathPrefix,
      toolset: call.exposedAs?.toolset ?? null,
      exposedTool: call.exposedAs?.name ?? null,
      argumentsDigest: digest,
    };
    // Its sealed arguments count against the tenant's storedAnswerBytes while it waits (its outcome once
    // decided): measured and stored under the tenant's row lock, so no two parks both take the last room.
    const { sealed, bytes } = await this.parked.seal(call.args);
    const stored = await this.budgetLocks.withTenantLocked(call.tenantId, async (tx, overrides) => {
      const limit = this.budgets.merge(overrides).storedAnswerBytes;
      const inUse = await this.budgetLocks.storedAnswerBytes(tx, call.tenantId);
      if (inUse + bytes > limit) {
        return tenantBudgetExceeded(
          'storedAnswerBytes',
          limit,
          inUse,
          bytes,
          'Nothing was parked and nothing ran. Decide or withdraw parked calls, wait for stored answers to expire, send smaller arguments, or ask the operator for a larger budget.',
        );
      }
      await this.parked.create(row, sealed, tx);
      return true;
    });
    if (stored instanceof AppError) throw stored;
    if (stored === false) throw tenantNotFound(call.tenantId);
    const identity = withPolicy(
      {
        tenantId: call.tenantId,
        projectId: call.projectId,
        invocationId: call.invocationId,
        tool,
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
    await this.recorder.parked(identity, call.redacted, call.startedAt);
    // Announced to the project's approval routes: the digest of the arguments, never the arguments.
    await this.notices.requested({
      tenantId: call.tenantId,
      projectId: call.projectId,
      invocationId: call.invocationId,
      tool,
      toolset: call.exposedAs?.toolset ?? null,
      requestedBy: {
        keyId: call.principal.apiKeyId,
        keyName: call.principal.keyName,
        user: call.principal.user,
        oauthClient: call.principal.oauthClient,
      },
      argumentsDigest: digest,
      expiresAt,
    });
    // Through a toolset, the name the model called it by (the audit row names both).
    return {
      invocationId: call.invocationId,
      tool: call.exposedAs?.name ?? tool,
      status: 'pending_approval',
      expiresAt: expiresAt.toISOString(),
    };
  }
}
