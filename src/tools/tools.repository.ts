import { Injectable } from '@nestjs/common';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';

export interface ProjectToolSettings {
  shellEnabled: boolean;
  shellAllowlist: string[];
  // Tools whose calls wait for a person's approval.
  approvalRequired: string[];
}

@Injectable()
export class ToolsRepository {
  constructor(private readonly prisma: PrismaService) {}

  findProjectToolSettings(tenantId: string, projectId: string): Promise<ProjectToolSettings | null> {
    if (!isUuid(projectId)) return Promise.resolve(null);
    return this.prisma.project.findFirst({
      where: { id: projectId, tenantId },
      select: { shellEnabled: true, shellAllowlist: true, approvalRequired: true },
    });
  }
}
