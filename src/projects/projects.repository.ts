import { Injectable } from '@nestjs/common';
import { afterCursor, type CursorPosition } from '../common/pagination/cursor.js';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';
import { orUniqueTaken, UNIQUE_TAKEN, type UniqueTaken } from '../database/unique-violation.js';
import type { Prisma, Project } from '../generated/prisma/client.js';
import type { ProjectSettings } from './project-settings.js';

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

  // UNIQUE_TAKEN: the tenant already has a project with this slug.
  create(tenantId: string, fields: ProjectFields): Promise<Project | UniqueTaken> {
    return orUniqueTaken(this.prisma.project.create({ data: { tenantId, ...fields } }));
  }

  // Within a transaction that holds the tenant's row lock (BudgetsRepository.withTenantLocked): the count
  // and the insert are then one step for every instance. The slug is looked up first, since a unique
  // violation would abort the transaction.
  async createLocked(tx: Prisma.TransactionClient, tenantId: string, fields: ProjectFields): Promise<Project | UniqueTaken> {
    if (await tx.project.findFirst({ where: { tenantId, slug: fields.slug }, select: { id: true } })) return UNIQUE_TAKEN;
    return tx.project.create({ data: { tenantId, ...fields } });
  }

  countLocked(tx: Prisma.TransactionClient, tenantId: string): Promise<number> {
    return tx.project.count({ where: { tenantId } });
  }

  // One row more than asked, so the caller knows whether another page exists.
  listPage(tenantId: string, limit: number, after: CursorPosition | null, only: readonly string[] | null = null): Promise<Project[]> {
    return this.prisma.project.findMany({
      where: { tenantId, ...afterCursor(after), ...(only && { id: { in: [...only] } }) },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: limit + 1,
    });
  }

  async idsOf(tenantId: string): Promise<string[]> {
    return (await this.prisma.project.findMany({ where: { tenantId }, select: { id: true } })).map((p) => p.id);
  }

  findById(tenantId: string, id: string): Promise<Project | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.prisma.project.findFirst({ where: { id, tenantId } });
  }

  // The operator's routes only: any tenant's project.
  findByIdAnyTenant(id: string): Promise<Project | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.prisma.project.findUnique({ where: { id } });
  }

  findSettings(tenantId: string, id: string): Promise<ProjectSettings | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.prisma.project.findFirst({
      where: { id, tenantId },
      select: { workspacePath: true, shellEnabled: true, shellAllowlist: true, approvalRequired: true },
    });
  }

  // updateMany scoped by tenant, so another tenant's id can never be touched; null when nothing matched,
  // UNIQUE_TAKEN when the new slug is another project's.
  async update(tenantId: string, id: string, fields: Partial<ProjectFields>): Promise<Project | null | UniqueTaken> {
    if (!isUuid(id)) return null;
    const updated = await orUniqueTaken(this.prisma.project.updateMany({ where: { id, tenantId }, data: fields }));
    if (updated === UNIQUE_TAKEN) return updated;
    return updated.count > 0 ? this.findById(tenantId, id) : null;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const { count } = await this.prisma.project.deleteMany({ where: { id, tenantId } });
    return count > 0;
  }
}
