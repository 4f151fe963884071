import { Injectable } from '@nestjs/common';
import type { ParkedCall } from '../generated/prisma/client.js';
import { keyMayUseTool, type KeyRole } from '../common/auth/key-roles.js';
import { argumentsInWorkspace } from '../tools/builtin-file-paths.js';
import { AuditLogAccess } from './audit-log-access.js';
import { invocationNotFound } from './audit.errors.js';
import { AuditRepository } from './audit.repository.js';
import { AuditWriter } from './audit-writer.js';
import { decodeSeqCursor, encodeSeqCursor } from './seq-cursor.js';
import { ParkedCallsRepository } from './parked-calls.repository.js';
import { InvocationResponseDto, type InvocationListResponseDto, type ListInvocationsQueryDto } from './dto/invocation.dto.js';

@Injectable()
export class InvocationsService {
  constructor(
    private readonly repository: AuditRepository,
    private readonly writer: AuditWriter,
    private readonly access: AuditLogAccess,
    private readonly parked: ParkedCallsRepository,
  ) {}

  // `tools`: a key bound to tools reads the calls of those tools only, as it lists and calls only them; a
  // list_files key would otherwise read every file written_file wrote, in the arguments of its row.
  async list(
    tenantId: string,
    projectId: string,
    query: ListInvocationsQueryDto,
    role: KeyRole = 'admin',
    tools: readonly string[] | null = null,
  ): Promise<InvocationListResponseDto> {
    // 404 for a missing or foreign project, not an empty list that would confirm nothing either way.
    await this.access.assertReadable(tenantId, projectId, role);
    const filter = { tool: query.tool, status: query.status, callerKeyId: query.callerKeyId, user: query.user };
    const limit = query.limit ?? 50;
    const after = query.cursor ? decodeSeqCursor(query.cursor) : null;
    // Rows still queued in this process are written first, so a caller reads its own calls.
    await this.writer.drain();
    const rows = await this.repository.listPage(tenantId, projectId, filter, limit, after, tools);
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    return {
      items: items.map((row) => InvocationResponseDto.from(row)),
      nextCursor: rows.length > limit && last ? encodeSeqCursor(last.seq) : null,
    };
  }

  // An admin or approver key, who decides the call, sees its arguments as they will run while it waits;
  // an agent key (and every answer after the decision) sees them redacted.
  async get(
    tenantId: string,
    projectId: string,
    invocationId: string,
    role: KeyRole = 'admin',
    tools: readonly string[] | null = null,
  ): Promise<InvocationResponseDto> {
    await this.access.assertReadable(tenantId, projectId, role);
    const showPendingArguments = role !== 'agent';
    await this.writer.drain();
    const row = await this.repository.findById(tenantId, projectId, invocationId);
    if (!row || !keyMayUseTool(tools, row.tool)) throw invocationNotFound(invocationId);
    // A call that was parked for approval: its decision, and once decided what it answered.
    const parked = await this.parked.findById(tenantId, projectId, invocationId);
    return { ...InvocationResponseDto.from(row), ...(parked ? approvalOf(parked, showPendingArguments) : {}) };
  }
}

function approvalOf(call: ParkedCall, showPendingArguments: boolean): Pick<InvocationResponseDto, 'approval' | 'outcome'> {
  return {
    approval: {
      status: call.status === 'done' ? 'approved' : call.status,
      reason: call.reason,
      decidedAt: call.decidedAt?.toISOString() ?? null,
      expiresAt: call.expiresAt.toISOString(),
      decidedBy: call.decidedByKeyId === null ? null : { keyId: call.decidedByKeyId, name: call.decidedByName },
      pathPrefix: call.pathPrefix,
      argumentsDigest: call.argumentsDigest,
      ...(showPendingArguments && call.status === 'pending' ? { pendingArguments: asTheyWillRun(call) } : {}),
    },
    ...(call.outcome !== null ? { outcome: call.outcome as Record<string, unknown> } : {}),
  };
}

// What a person approves is what will run: through a toolset that confines the tool to a directory, the
// paths as the workspace sees them (the model's are relative to that directory), the fixed arguments
// included (they were added when the call was admitted).
function asTheyWillRun(call: ParkedCall): unknown {
  const args = call.arguments;
  if (call.pathPrefix === null || typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  return argumentsInWorkspace(call.tool, args, call.pathPrefix);
}
