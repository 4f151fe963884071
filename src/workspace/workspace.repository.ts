import { Injectable } from '@nestjs/common';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';

@Injectable()
export class WorkspaceRepository {
  constructor(private readonly prisma: PrismaService) {}

  // null: no such project for this tenant; { workspacePath: null }: the project has none set.
  findWorkspacePath(tenantId: string, projectId: string): Promise<{ workspacePath: string | null } | null> {
    if (!isUuid(projectId)) return Promise.resolve(null);
    return this.prisma.project.findFirst({ where: { id: projectId, tenantId }, select: { workspacePath: true } });
  }
}
