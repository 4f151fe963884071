import { Injectable } from '@nestjs/common';
import { afterCursor, type CursorPosition } from '../common/pagination/cursor.js';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';
import type { Prisma, Skill } from '../generated/prisma/client.js';

export interface SkillFields {
  name: string;
  version: string;
  description: string;
  tools: Prisma.InputJsonValue;
}

type Tx = Prisma.TransactionClient;

@Injectable()
export class SkillsRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(tenantId: string, fields: SkillFields, signingSecret: string): Promise<Skill> {
    return this.prisma.skill.create({ data: { tenantId, ...fields, signingSecret } });
  }

  listPage(tenantId: string, limit: number, after: CursorPosition | null): Promise<Skill[]> {
    return this.prisma.skill.findMany({
      where: { tenantId, ...afterCursor(after) },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: limit + 1,
    });
  }

  findById(tenantId: string, id: string, tx: Tx = this.prisma): Promise<Skill | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return tx.skill.findFirst({ where: { id, tenantId } });
  }

  async update(tenantId: string, id: string, fields: Omit<SkillFields, 'name'>, tx: Tx = this.prisma): Promise<Skill | null> {
    const { count } = await tx.skill.updateMany({ where: { id, tenantId }, data: fields });
    return count > 0 ? this.findById(tenantId, id, tx) : null;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const { count } = await this.prisma.skill.deleteMany({ where: { id, tenantId } });
    return count > 0;
  }

  // The skills enabled on a project, oldest first.
  enabledOnProject(tenantId: string, projectId: string, tx: Tx = this.prisma): Promise<Skill[]> {
    if (!isUuid(projectId)) return Promise.resolve([]);
    return tx.skill.findMany({
      where: { tenantId, projects: { some: { projectId } } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
  }

  async projectExists(tenantId: string, projectId: string): Promise<boolean> {
    if (!isUuid(projectId)) return false;
    return (await this.prisma.project.count({ where: { id: projectId, tenantId } })) > 0;
  }

  // Projects (of any of the tenant's) that have this skill enabled.
  projectsWithSkill(skillId: string, tx: Tx = this.prisma): Promise<string[]> {
    return tx.projectSkill.findMany({ where: { skillId }, select: { projectId: true } }).then((rows) => rows.map((r) => r.projectId));
  }

  // Locks the project row for the rest of the transaction: enabling skills on one project is serialised,
  // so two concurrent enables cannot both pass the name-collision check.
  async lockProject(tenantId: string, projectId: string, tx: Tx): Promise<boolean> {
    if (!isUuid(projectId)) return false;
    const rows = await tx.$queryRaw<Array<{ id: string }>>`SELECT id FROM projects WHERE id = ${projectId}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
    return rows.length > 0;
  }

  async enable(projectId: string, skillId: string, tx: Tx): Promise<Date> {
    return (await tx.projectSkill.create({ data: { projectId, skillId } })).createdAt;
  }

  isEnabled(projectId: string, skillId: string, tx: Tx): Promise<boolean> {
    return tx.projectSkill.count({ where: { projectId, skillId } }).then((n) => n > 0);
  }

  async disable(tenantId: string, projectId: string, skillId: string): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(skillId)) return false;
    const { count } = await this.prisma.projectSkill.deleteMany({ where: { projectId, skillId, skill: { tenantId } } });
    return count > 0;
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(fn);
  }
}
