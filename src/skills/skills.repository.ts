import { Injectable } from '@nestjs/common';
import { afterCursor, type CursorPosition } from '../common/pagination/cursor.js';
import { SecretBox } from '../common/secrets/secret-box.js';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';
import type { Prisma, Skill } from '../generated/prisma/client.js';
import { openHeaders, sealHeaders } from './skill-secrets.js';

export interface SkillFields {
  name: string;
  version: string;
  description: string;
  tools: Prisma.InputJsonValue;
}

type Tx = Prisma.TransactionClient;

// Rows come out with their secrets opened and go in with them sealed (skill-secrets.ts): nothing above
// this class sees a sealed value, and nothing below it a plain one.
@Injectable()
export class SkillsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly box: SecretBox,
  ) {}

  async create(tenantId: string, fields: SkillFields, signingSecret: string): Promise<Skill> {
    const row = await this.prisma.skill.create({
      data: { tenantId, ...fields, tools: sealHeaders(fields.tools, this.box), signingSecret: this.box.seal(signingSecret) },
    });
    return this.opened(row);
  }

  async listPage(tenantId: string, limit: number, after: CursorPosition | null): Promise<Skill[]> {
    const rows = await this.prisma.skill.findMany({
      where: { tenantId, ...afterCursor(after) },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: limit + 1,
    });
    return rows.map((row) => this.opened(row));
  }

  async findById(tenantId: string, id: string, tx: Tx = this.prisma): Promise<Skill | null> {
    if (!isUuid(id)) return null;
    const row = await tx.skill.findFirst({ where: { id, tenantId } });
    return row && this.opened(row);
  }

  async update(tenantId: string, id: string, fields: Omit<SkillFields, 'name'>, tx: Tx = this.prisma): Promise<Skill | null> {
    const { count } = await tx.skill.updateMany({ where: { id, tenantId }, data: { ...fields, tools: sealHeaders(fields.tools, this.box) } });
    return count > 0 ? this.findById(tenantId, id, tx) : null;
  }

  // Seals what is stored in clear (rows from before sealing) or under a key other than the current one,
  // a batch at a time. A row changed meanwhile is left to the next start; updated_at stays as it was.
  async resealSecrets(onUnreadable: (skillId: string, error: Error) => void, batchSize = 200): Promise<number> {
    const current = `tgenc:v1:${this.box.currentKeyId}:`;
    let resealed = 0;
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const rows = await this.prisma.skill.findMany({
        where: { id: { gt: after }, NOT: { signingSecret: { startsWith: current } } },
        orderBy: { id: 'asc' },
        take: batchSize,
      });
      if (rows.length === 0) return resealed;
      for (const row of rows) {
        let open: Skill;
        try {
          open = this.opened(row);
        } catch (error) {
          // Sealed with a key that is no longer configured: say which, and leave the row as it is.
          onUnreadable(row.id, error as Error);
          continue;
        }
        resealed += await this.prisma.$executeRaw`UPDATE skills SET signing_secret = ${this.box.seal(open.signingSecret)},
          tools = ${JSON.stringify(sealHeaders(open.tools, this.box))}::jsonb
          WHERE id = ${row.id}::uuid AND signing_secret = ${row.signingSecret}`;
      }
      after = rows[rows.length - 1].id;
    }
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const { count } = await this.prisma.skill.deleteMany({ where: { id, tenantId } });
    return count > 0;
  }

  // The skills enabled on a project, oldest first.
  async enabledOnProject(tenantId: string, projectId: string, tx: Tx = this.prisma): Promise<Skill[]> {
    if (!isUuid(projectId)) return [];
    const rows = await tx.skill.findMany({
      where: { tenantId, projects: { some: { projectId } } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return rows.map((row) => this.opened(row));
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

  private opened(row: Skill): Skill {
    return { ...row, signingSecret: this.box.openOrPlain(row.signingSecret), tools: openHeaders(row.tools, this.box) };
  }
}
