import { Injectable } from '@nestjs/common';
import { afterCursor, type CursorPosition } from '../common/pagination/cursor.js';
import { SecretBox } from '../common/secrets/secret-box.js';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';
import type { Tx } from '../database/transaction.js';
import { orUniqueTaken, UNIQUE_TAKEN, type UniqueTaken } from '../database/unique-violation.js';
import { Prisma, type Skill } from '../generated/prisma/client.js';
import type { SkillToolSpec } from './skill-compiler.js';
import { openExecutorSecrets, openSourceSecrets, sealExecutorSecrets, sealSourceSecrets } from './skill-secrets.js';
import type { McpSource } from './mcp/mcp-skill-importer.js';
import { type NewSkillChange, SkillChangesRepository } from './definitions/skill-changes.repository.js';
import { type ToolNameClaim, ToolNameClaims } from './tool-name-claims.js';

export interface SkillFields {
  name: string;
  version: string;
  description: string;
  tools: SkillToolSpec[];
  // The MCP server the tools were imported from; null for a tenant's own tools.
  source: McpSource | null;
}

// A skill as everything above this class sees it: secrets opened, the JSON columns parsed.
export type SkillRecord = Omit<Skill, 'tools' | 'source'> & { tools: SkillToolSpec[]; source: McpSource | null };

// A skill whose row (and the rows of the projects it is enabled on, locked first) is locked for the rest of a
// transaction: a review's decision and a refresh of its source run one at a time, on any instance.
export interface LockedSkill {
  skill: SkillRecord;
  projectIds: readonly string[];
  // The transaction, for SkillChangesRepository.
  tx: Tx;
  // Runs `check` on each project the skill is enabled on (name collisions of a tool added to it).
  checkProjects(check: (project: LockedProject) => Promise<void>): Promise<void>;
  saveTools(tools: SkillToolSpec[]): Promise<SkillRecord>;
}

// A project whose row is locked for the rest of a transaction, with what enabling skills on it reads and
// writes inside that transaction. The lock serialises enables on one project (and the writes of its
// toolsets, which take it too), so two concurrent ones cannot both pass the name-collision check.
export interface LockedProject {
  // The transaction, for a feature that writes under the same lock (ToolsetsRepository).
  tx: Tx;
  enabledSkills(): Promise<SkillRecord[]>;
  // The names the project's toolsets give tools (ToolNameClaims).
  claimedNames(): Promise<ToolNameClaim[]>;
  findSkill(skillId: string): Promise<SkillRecord | null>;
  isEnabled(skillId: string): Promise<boolean>;
  enable(skillId: string): Promise<Date>;
}

// What withLockedProject answers when the tenant has no such project.
export const NO_PROJECT = Symbol('no such project');

// Rows come out with their secrets opened and go in with them sealed (skill-secrets.ts): nothing above
// this class sees a sealed value, and nothing below it a plain one. Prisma's types stay in here too.
@Injectable()
export class SkillsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly box: SecretBox,
    private readonly changes: SkillChangesRepository,
    private readonly claims: ToolNameClaims,
  ) {}

  // UNIQUE_TAKEN: the tenant already has a skill with this name. `pending`: the changes its import left for review.
  // In `within` (a transaction holding the tenant's budget lock, so no other registration of the tenant's
  // runs meanwhile: the name is looked up first, as a violation would abort the whole transaction), or in a
  // transaction of its own.
  async create(
    tenantId: string,
    fields: SkillFields,
    signingSecret: string,
    pending: NewSkillChange[] = [],
    within?: Tx,
  ): Promise<SkillRecord | UniqueTaken> {
    const write = async (tx: Tx) => {
      const created = await tx.skill.create({ data: { tenantId, ...this.sealed(fields), signingSecret: this.box.seal(signingSecret) } });
      for (const change of pending) await this.changes.create(tenantId, created.id, change, tx);
      return created;
    };
    if (within && (await within.skill.findFirst({ where: { tenantId, name: fields.name }, select: { id: true } }))) return UNIQUE_TAKEN;
    const row = await orUniqueTaken(within ? write(within) : this.prisma.$transaction(write));
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
  // The changes waiting for review are superseded by the new version's own (`pending`).
  async updateChecked(
    tenantId: string,
    id: string,
    fields: Omit<SkillFields, 'name'>,
    check: (project: LockedProject) => Promise<void>,
    pending: NewSkillChange[] = [],
  ): Promise<SkillRecord | null> {
    if (!isUuid(id)) return null;
    return this.prisma.$transaction(async (tx) => {
      const projects = await tx.projectSkill.findMany({ where: { skillId: id }, select: { projectId: true } });
      for (const { projectId } of projects) {
        if (await this.lockProject(tenantId, projectId, tx)) await check(this.locked(tenantId, projectId, tx));
      }
      const { count } = await tx.skill.updateMany({ where: { id, tenantId }, data: { ...this.sealed(fields), sourceCheckedAt: null } });
      if (count === 0) return null;
      await this.changes.supersedePending(id, tx);
      for (const change of pending) await this.changes.create(tenantId, id, change, tx);
      return this.findById(tenantId, id, tx);
    });
  }

  // Runs `work` with the skill locked (see LockedSkill); null when the tenant has no such skill.
  async withLockedSkill<T>(tenantId: string, skillId: string, work: (locked: LockedSkill) => Promise<T>): Promise<T | null> {
    if (!isUuid(skillId)) return null;
    return this.prisma.$transaction(async (tx) => {
      // Projects first, then the skill: the order a new version takes its locks in (updateChecked).
      const projects = await tx.projectSkill.findMany({
        where: { skillId, skill: { tenantId } },
        select: { projectId: true },
        orderBy: { projectId: 'asc' },
      });
      const projectIds: string[] = [];
      for (const { projectId } of projects) if (await this.lockProject(tenantId, projectId, tx)) projectIds.push(projectId);
      const rows = await tx.$queryRaw<
        Array<{ id: string }>
      >`SELECT id FROM skills WHERE id = ${skillId}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
      if (rows.length === 0) return null;
      const skill = (await this.findById(tenantId, skillId, tx))!;
      return work({
        skill,
        projectIds,
        tx,
        checkProjects: async (check) => {
          for (const projectId of projectIds) await check(this.locked(tenantId, projectId, tx));
        },
        saveTools: async (tools) => {
          await tx.skill.updateMany({
            where: { id: skillId, tenantId },
            data: { tools: sealExecutorSecrets(tools, this.box) as unknown as Prisma.InputJsonValue },
          });
          return (await this.findById(tenantId, skillId, tx))!;
        },
      });
    });
  }

  // Skills with an MCP source not read for `intervalMs`, at most `limit`, claimed (marked read now) in one
  // statement: an instance skips rows another is claiming, so each is read by one instance per interval.
  async claimDueSources(intervalMs: number, limit: number): Promise<Array<{ id: string; tenantId: string }>> {
    return this.prisma.$queryRaw<Array<{ id: string; tenantId: string }>>`UPDATE skills SET source_checked_at = now()
      WHERE id IN (SELECT id FROM skills WHERE source IS NOT NULL
        AND (source_checked_at IS NULL OR source_checked_at <= now() - make_interval(secs => ${intervalMs / 1000}))
        ORDER BY source_checked_at ASC NULLS FIRST LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING id::text AS id, tenant_id::text AS "tenantId"`;
  }

  async markSourceChecked(tenantId: string, skillId: string): Promise<void> {
    await this.prisma.skill.updateMany({ where: { id: skillId, tenantId }, data: { sourceCheckedAt: new Date() } });
  }

  // Runs `work` in a transaction that holds the project's row lock: its own, or `within` (one that holds the
  // tenant's budget lock already: the tenant's row is always locked before its project's).
  async withLockedProject<T>(
    tenantId: string,
    projectId: string,
    work: (project: LockedProject) => Promise<T>,
    within?: Tx,
  ): Promise<T | typeof NO_PROJECT> {
    if (!isUuid(projectId)) return NO_PROJECT;
    const locked = async (tx: Tx) => {
      if (!(await this.lockProject(tenantId, projectId, tx))) return NO_PROJECT;
      return work(this.locked(tenantId, projectId, tx));
    };
    return within ? locked(within) : this.prisma.$transaction(locked);
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
        const source = open.source ? JSON.stringify(sealSourceSecrets(open.source, this.box)) : null;
        resealed += await this.prisma.$executeRaw`UPDATE skills SET signing_secret = ${this.box.seal(open.signingSecret)},
          tools = ${JSON.stringify(sealExecutorSecrets(open.tools, this.box))}::jsonb, source = ${source}::jsonb
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
      tx,
      enabledSkills: () => this.enabledOnProject(tenantId, projectId, tx),
      claimedNames: () => this.claims.on(tx, tenantId, projectId),
      findSkill: (skillId) => this.findById(tenantId, skillId, tx),
      isEnabled: (skillId) => tx.projectSkill.count({ where: { projectId, skillId } }).then((n) => n > 0),
      enable: async (skillId) => (await tx.projectSkill.create({ data: { projectId, skillId } })).createdAt,
    };
  }

  private async lockProject(tenantId: string, projectId: string, tx: Tx): Promise<boolean> {
    const rows = await tx.$queryRaw<
      Array<{ id: string }>
    >`SELECT id FROM projects WHERE id = ${projectId}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
    return rows.length > 0;
  }

  private sealed<F extends Omit<SkillFields, 'name'>>(
    fields: F,
  ): Omit<F, 'tools' | 'source'> & { tools: Prisma.InputJsonValue; source: Prisma.InputJsonValue | typeof Prisma.DbNull } {
    return {
      ...fields,
      tools: sealExecutorSecrets(fields.tools, this.box) as unknown as Prisma.InputJsonValue,
      source: fields.source ? (sealSourceSecrets(fields.source, this.box) as unknown as Prisma.InputJsonValue) : Prisma.DbNull,
    };
  }

  // The one place the tools column becomes specs: it only ever holds what registration vetted.
  private opened(row: Skill): SkillRecord {
    const tools = row.tools as unknown as SkillToolSpec[];
    const source = row.source === null ? null : openSourceSecrets(row.source as unknown as McpSource, this.box);
    return { ...row, signingSecret: this.box.openOrPlain(row.signingSecret), tools: openExecutorSecrets(tools, this.box), source };
  }
}
