import { Injectable } from '@nestjs/common';
import { afterCursor, type CursorPosition } from '../common/pagination/cursor.js';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';
import type { Project } from '../generated/prisma/client.js';

export interface ProjectFields {
  name: string;
  slug: string;
  workspacePath: string | null;
  shellEnabled: boolean;
  shellAllowlist: string[];
  approvalRequired: string[];
}

@Injectable()
export class ProjectsRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(tenantId: string, fields: ProjectFields): Promise<Project> {
    return this.prisma.project.create({ data: { tenantId, ...fields } });
  }

  // One row more than asked, so the caller knows whether another page exists.
  listPage(tenantId: string, limit: number, after: CursorPosition | null): Promise<Project[]> {
    return this.prisma.project.findMany({
      where: { tenantId, ...afterCursor(after) },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: limit + 1,
    });
  }

  findById(tenantId: string, id: string): Promise<Project | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.prisma.project.findFirst({ where: { id, tenantId } });
  }

  // updateMany scoped by tenant, so another tenant's id can never be touched; null when nothing matched.
  async update(tenantId: string, id: string, fields: Partial<ProjectFields>): Promise<Project | null> {
    if (!isUuid(id)) return null;
    const { count } = await this.prisma.project.updateMany({ where: { id, tenantId }, data: fields });
    return count > 0 ? this.findById(tenantId, id) : null;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const { count } = await this.prisma.project.deleteMany({ where: { id, tenantId } });
    return count > 0;
  }
}
