import { Injectable } from '@nestjs/common';
import { ProjectsService } from '../projects/projects.service.js';
import { AuditService } from './audit.service.js';
import { InvocationResponseDto, type InvocationListResponseDto, type ListInvocationsQueryDto } from './dto/invocation.dto.js';

@Injectable()
export class InvocationsService {
  constructor(
    private readonly audit: AuditService,
    private readonly projects: ProjectsService,
  ) {}

  async list(tenantId: string, projectId: string, query: ListInvocationsQueryDto): Promise<InvocationListResponseDto> {
    // 404 for a missing or foreign project, not an empty list that would confirm nothing either way.
    await this.projects.get(tenantId, projectId);
    const filter = { tool: query.tool, status: query.status };
    return this.audit.list(tenantId, projectId, filter, query.limit ?? 50, query.cursor, (row) => InvocationResponseDto.from(row));
  }

  async get(tenantId: string, projectId: string, invocationId: string): Promise<InvocationResponseDto> {
    await this.projects.get(tenantId, projectId);
    return InvocationResponseDto.from(await this.audit.get(tenantId, projectId, invocationId));
  }
}
