import { Injectable } from '@nestjs/common';
import { afterCursor, type CursorPosition } from '../common/pagination/cursor.js';
import { SecretBox } from '../common/secrets/secret-box.js';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';
import { orUniqueTaken, UNIQUE_TAKEN, type UniqueTaken } from '../database/unique-violation.js';
import type { Prisma, Skill } from '../generated/prisma/client.js';
import type { SkillToolSpec } from './skill-compiler.js';
import { openExecutorSecrets, sealExecutorSecrets } from './skill-secrets.js';

export interface SkillFields {
  name: string;
  version: string;
  description: string;
  tools: SkillToolSpec[];
}

// A skill as everything above this class sees it: secrets opened, the tools column parsed into specs.
export type SkillRecord = Omit<Skill, 'tools'> & { tools: SkillToolSpec[] };

// A project whose row is locked for the rest of a transaction, with what enabling skills on it reads and
// writes inside that transaction. The lock serialises enables on one project, so two concurrent ones cannot
// both pass the name-collision check.
export interface LockedProject {
  enabledSkills(): Promise<SkillRecord[]>;
  findSkill(skillId: string): Promise<SkillRecord | null>;
  isEnabled(skillId: string): Promise<boolean>;
  enable(skillId: string): Promise<Date>;
}

// What withLockedProject answers when the tenant has no such project.
export const NO_PROJECT = Symbol('no such project');

type Tx = Prisma.TransactionClient;

// Rows come out with their secrets opened and go in with them sealed (skill-secrets.ts): nothing above
// this class sees a sealed value, and nothing below it a plain one. Prisma's types stay in here too.
@Injectable()
export class SkillsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly box: SecretBox,
  ) {}

  // UNIQUE_TAKEN: the tenant already has a skill with this name.
  async create(tenantId: string, fields: SkillFields, signingSecret: string): Promise<SkillRecord | UniqueTaken> {
    const row = await orUniqueTaken(
      this.prisma.skill.create({
        data: { tenantId, ...this.sealed(fields), signingSecret: this.box.seal(signingSecret) },
      }),
    );
    return row === UNIQUE_TAKEN ? row : this.opened(row);
  }

  async listPage(tenantId: string, limit: number, after: CursorPosition | null): Promise<SkillRecord[]> {
    const rows = await this.prisma.skill.findMany({
      where: { tenantId, ...afterCursor(after) },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: limit + 1,
    });
    return rows.map((row) => this.opened(row));
  }

  async findById(tenantId: string, id: string, tx: Tx = this.prisma): Promise<SkillRecord | null> {
    if (!isUuid(id)) return null;
    const row = await tx.skill.findFirst({ where: { id, tenantId } });
    return row && this.opened(row);
  }

  // A new version, in one transaction with `check` run on every project the skill is enabled on, each
  // locked first (a check that throws undoes everything). null when the tenant has no such skill.
  async updateChecked(
    tenantId: string,
    id: string,
    fields: Omit<SkillFields, 'name'>,
    check: (project: LockedProject) => Promise<void>,
  ): Promise<SkillRecord | null> {
    if (!isUuid(id)) return null;
    return this.prisma.$transaction(async (tx) => {
      const projects = await tx.projectSkill.findMany({ where: { skillId: id }, select: { projectId: true } });
      for (const { projectId } of projects) {
        if (await this.lockProject(tenantId, projectId, tx)) await check(this.locked(tenantId, projectId, tx));
      }
      const { count } = await tx.skill.updateMany({ where: { id, tenantId }, data: this.sealed(fields) });
      return count > 0 ? this.findById(tenantId, id, tx) : null;
    });
  }

  // Runs `work` in a transaction that holds the project's row lock.
  async withLockedProject<T>(tenantId: string, projectId: string, work: (project: LockedProject) => Promise<T>): Promise<T | typeof NO_PROJECT> {
    if (!isUuid(projectId)) return NO_PROJECT;
    return this.prisma.$transaction(async (tx) => {
      if (!(await this.lockProject(tenantId, projectId, tx))) return NO_PROJECT;
      return work(this.locked(tenantId, projectId, tx));
    });
  }

  // Seals what is stored in clear (rows from before sealing, or executor URLs stored before they were sealed)
  // or under a key other than the current one, a batch at a time. A row changed meanwhile is left to the
  // next start; updated_at stays as it was.
  async resealSecrets(onUnreadable: (skillId: string, error: Error) => void, batchSize = 200): Promise<number> {
    const current = `tgenc:v1:${this.box.currentKeyId}:`;
    const plainUrls = await this.prisma.$queryRaw<Array<{ id: string }>>`SELECT id::text AS id FROM skills
      WHERE jsonb_path_exists(tools, '$[*].executor ? (exists(@.url) && !(@.url starts with "tgenc:"))')`;
    const unsealed = { OR: [{ NOT: { signingSecret: { startsWith: current } } }, { id: { in: plainUrls.map((row) => row.id) } }] };
    let resealed = 0;
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const rows = await this.prisma.skill.findMany({
        where: { id: { gt: after }, ...unsealed },
        orderBy: { id: 'asc' },
        take: batchSize,
      });
      if (rows.length === 0) return resealed;
      for (const row of rows) {
        let open: SkillRecord;
        try {
          open = this.opened(row);
        } catch (error) {
          // Sealed with a key that is no longer configured: say which, and leave the row as it is.
          onUnreadable(row.id, error as Error);
          continue;
        }
        resealed += await this.prisma.$executeRaw`UPDATE skills SET signing_secret = ${this.box.seal(open.signingSecret)},
          tools = ${JSON.stringify(sealExecutorSecrets(open.tools, this.box))}::jsonb
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
  async enabledOnProject(tenantId: string, projectId: string, tx: Tx = this.prisma): Promise<SkillRecord[]> {
    if (!isUuid(projectId)) return [];
    const rows = await tx.skill.findMany({
      where: { tenantId, projects: { some: { projectId } } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return rows.map((row) => this.opened(row));
  }

  async disable(tenantId: string, projectId: string, skillId: string): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(skillId)) return false;
    const { count } = await this.prisma.projectSkill.deleteMany({ where: { projectId, skillId, skill: { tenantId } } });
    return count > 0;
  }

  private locked(tenantId: string, projectId: string, tx: Tx): LockedProject {
    return {
      enabledSkills: () => this.enabledOnProject(tenantId, projectId, tx),
      findSkill: (skillId) => this.findById(tenantId, skillId, tx),
      isEnabled: (skillId) => tx.projectSkill.count({ where: { projectId, skillId } }).then((n) => n > 0),
      enable: async (skillId) => (await tx.projectSkill.create({ data: { projectId, skillId } })).createdAt,
    };
  }

  private async lockProject(tenantId: string, projectId: string, tx: Tx): Promise<boolean> {
    const rows = await tx.$queryRaw<Array<{ id: string }>>`SELECT id FROM projects WHERE id = ${projectId}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
    return rows.length > 0;
  }

  private sealed<F extends Omit<SkillFields, 'name'>>(fields: F): Omit<F, 'tools'> & { tools: Prisma.InputJsonValue } {
    return { ...fields, tools: sealExecutorSecrets(fields.tools, this.box) as unknown as Prisma.InputJsonValue };
  }

  // The one place the tools column becomes specs: it only ever holds what registration vetted.
  private opened(row: Skill): SkillRecord {
    const tools = row.tools as unknown as SkillToolSpec[];
    return { ...row, signingSecret: this.box.openOrPlain(row.signingSecret), tools: openExecutorSecrets(tools, this.box) };
  }
}
