import { Injectable } from '@nestjs/common';
import type { ParkedCall } from '../generated/prisma/client.js';
import { ProjectsService } from '../projects/projects.service.js';
import { AuditService } from './audit.service.js';
import { ParkedCallsRepository } from './parked-calls.repository.js';
import { InvocationResponseDto, type InvocationListResponseDto, type ListInvocationsQueryDto } from './dto/invocation.dto.js';

@Injectable()
export class InvocationsService {
  constructor(
    private readonly audit: AuditService,
    private readonly projects: ProjectsService,
    private readonly parked: ParkedCallsRepository,
  ) {}

  async list(tenantId: string, projectId: string, query: ListInvocationsQueryDto): Promise<InvocationListResponseDto> {
    // 404 for a missing or foreign project, not an empty list that would confirm nothing either way.
    await this.projects.get(tenantId, projectId);
    const filter = { tool: query.tool, status: query.status };
    return this.audit.list(tenantId, projectId, filter, query.limit ?? 50, query.cursor, (row) => InvocationResponseDto.from(row));
  }

  async get(tenantId: string, projectId: string, invocationId: string): Promise<InvocationResponseDto> {
    await this.projects.get(tenantId, projectId);
    const row = await this.audit.get(tenantId, projectId, invocationId);
    // A call that was parked for approval: its decision, and once decided what it answered.
    const parked = await this.parked.findById(tenantId, projectId, invocationId);
    return { ...InvocationResponseDto.from(row), ...(parked ? approvalOf(parked) : {}) };
  }
}

function approvalOf(call: ParkedCall): Pick<InvocationResponseDto, 'approval' | 'outcome'> {
  return {
    approval: {
      status: call.status === 'done' ? 'approved' : call.status,
      reason: call.reason,
      decidedAt: call.decidedAt?.toISOString() ?? null,
      expiresAt: call.expiresAt.toISOString(),
    },
    ...(call.outcome !== null ? { outcome: call.outcome as Record<string, unknown> } : {}),
  };
}
