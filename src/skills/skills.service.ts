import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { decodeCursor, toPage } from '../common/pagination/cursor.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { UNIQUE_TAKEN } from '../database/unique-violation.js';
import { ProjectAccess } from '../projects/project-access.js';
import { projectNotFound } from '../projects/projects.errors.js';
import { type CompiledSkillTool, type SkillBody, SkillCompiler, type SkillToolSpec, vetSkillShapes } from './skill-compiler.js';
import { WORKER_POOL, type WorkerPool } from '../common/worker-pool/worker-pool.js';
import type { SkillWorkerTasks } from './executors/skill-worker-tasks.js';
import { BudgetsRepository } from '../budgets/budgets.repository.js';
import { TenantBudgets } from '../budgets/tenant-budgets.js';
import { tenantNotFound } from '../tenants/tenants.errors.js';
import { SKILL_MAX_BYTES, SKILL_REGISTRATIONS_WAITING } from './skills.limits.js';
import { TenantTurns } from './tenant-turns.js';
import { checkToolCollisions } from './tool-collisions.js';
import { definitionDiff, definitionHash } from './definitions/definition-pin.js';
import { reviewDescriptions } from './definitions/description-rules.js';
import type { NewSkillChange } from './definitions/skill-changes.repository.js';
import {
  type ProjectSkillListResponseDto,
  type ProjectSkillResponseDto,
  type RegisteredSkillResponseDto,
  type SkillListResponseDto,
  SkillResponseDto,
} from './dto/skill.dto.js';
import { skillRevision, skillSource, SkillTools } from './skill-tools.js';
import {
  skillAlreadyEnabled,
  skillNameTaken,
  skillNotEnabled,
  skillNotFound,
  skillRegistrationBusy,
  skillTooLarge,
  skillVersionExists,
} from './skills.errors.js';
import { NO_PROJECT, type SkillRecord, SkillsRepository } from './skills.repository.js';
import { type McpSource, McpSkillImporter } from './mcp/mcp-skill-importer.js';
import { checkSkillEndpoints } from './skill-endpoints.js';
import { executorSecrets } from './skill-secrets.js';
import { AppError } from '../common/errors/app-error.js';
import { redactAppError, redactText, scrubWholeValues } from '../common/secrets/secret-redaction.js';

@Injectable()
export class SkillsService {
  constructor(
    private readonly repository: SkillsRepository,
    private readonly compiler: SkillCompiler,
    private readonly skillTools: SkillTools,
    private readonly importer: McpSkillImporter,
    private readonly projects: ProjectAccess,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WORKER_POOL) private readonly pool: WorkerPool<SkillWorkerTasks>,
    private readonly budgets: TenantBudgets,
    private readonly budgetLocks: BudgetsRepository,
  ) {}

  // One registration or update of a tenant's skills is checked at a time on an instance; a few more wait.
  private readonly turns = new TenantTurns(SKILL_REGISTRATIONS_WAITING);

  // Vetted and compiled before anything is stored; the signing secret is returned this once.
  // The tools are pinned as registered; an MCP source's tools the description rules flag are kept withheld,
  // each with a change waiting for an admin's review (src/skills/review).
  // Counted and created under the tenant's row lock (maxSkills): two instances cannot both make the last one allowed.
  // `user`: the end user the request names (Toolgate-User), whose connection reads an MCP source that asks for OAuth.
  async register(tenantId: string, body: unknown, user: string | null = null): Promise<RegisteredSkillResponseDto> {
    return this.inTurn(tenantId, async () => {
      const { skill: parsed, source } = await this.parse(tenantId, body, user);
      const stored = fields(parsed, source);
      const tools = await this.vetted(tenantId, parsed, stored);
      const signingSecret = `tgs_${randomBytes(32).toString('hex')}`;
      const skill = await this.budgetLocks.withTenantLocked(tenantId, async (tx, overrides) => {
        const count = await tx.skill.count({ where: { tenantId } });
        const advice = 'Delete a skill the tenant no longer needs, or ask the operator for a larger budget.';
        return (
          this.budgets.refusalForOneMore(overrides, 'maxSkills', count, advice) ??
          this.repository.create(tenantId, stored, signingSecret, flaggedAtImport(parsed.tools), tx)
        );
      });
      if (skill instanceof AppError) throw skill;
      if (skill === false) throw tenantNotFound(tenantId);
      if (skill === UNIQUE_TAKEN) throw skillNameTaken(parsed.name);
      this.compiler.remember(skill.id, skillRevision(skill), tools);
      return { ...SkillResponseDto.from(skill), signingSecret };
    });
  }

  // Past SKILL_REGISTRATIONS_WAITING waiting, 429: one tenant's registrations never queue up on an instance.
  private inTurn<T>(tenantId: string, work: () => Promise<T>): Promise<T> {
    const turn = this.turns.run(tenantId, work);
    if (turn === null) throw skillRegistrationBusy(SKILL_REGISTRATIONS_WAITING);
    return turn;
  }

  // The size cap first (nothing is compiled for a skill that cannot be stored), then every schema vetted in
  // the worker pool under the tenant's share of it; the validators are built here and compile on first call.
  private async vetted(tenantId: string, skill: SkillBody, stored: ReturnType<typeof fields>): Promise<CompiledSkillTool[]> {
    vetSkillShapes(skill.tools);
    const bytes = Buffer.byteLength(JSON.stringify(stored.tools));
    if (bytes > SKILL_MAX_BYTES) throw skillTooLarge(bytes, SKILL_MAX_BYTES);
    await this.pool.run('vetSkill', { tools: skill.tools }, { key: tenantId });
    return this.compiler.build(skill, skillSource(skill));
  }

  async list(tenantId: string, limit: number, cursor: string | undefined): Promise<SkillListResponseDto> {
    const rows = await this.repository.listPage(tenantId, limit, cursor ? decodeCursor(cursor) : null);
    return toPage(rows, limit, (s) => SkillResponseDto.from(s));
  }

  async get(tenantId: string, skillId: string): Promise<SkillResponseDto> {
    return SkillResponseDto.from(await this.find(tenantId, skillId));
  }

  // A new version: same name, new tools. Every project it is enabled on must still have unique names.
  async update(tenantId: string, skillId: string, body: unknown, user: string | null = null): Promise<SkillResponseDto> {
    return this.inTurn(tenantId, async () => {
      const current = await this.find(tenantId, skillId);
      const { skill: parsed, source } = await this.parse(tenantId, body, user);
      if (parsed.name !== current.name) parsed.name = current.name;
      if (parsed.version === current.version) throw skillVersionExists(parsed.version);
      const stored = fields(parsed, source);
      const tools = await this.vetted(tenantId, parsed, stored);
      const updated = await this.repository.updateChecked(
        tenantId,
        skillId,
        stored,
        (project) => checkToolCollisions(project, skillId, parsed.tools),
        flaggedAtImport(parsed.tools),
      );
      if (!updated) throw skillNotFound(skillId);
      this.compiler.remember(updated.id, skillRevision(updated), tools);
      this.skillTools.forgetTenant(tenantId);
      return SkillResponseDto.from(updated);
    });
  }

  async delete(tenantId: string, skillId: string): Promise<void> {
    if (!(await this.repository.delete(tenantId, skillId))) throw skillNotFound(skillId);
    this.skillTools.forgetTenant(tenantId, skillId);
  }

  async enable(tenantId: string, projectId: string, skillId: string): Promise<ProjectSkillResponseDto> {
    const result = await this.repository.withLockedProject(tenantId, projectId, async (project) => {
      const skill = await project.findSkill(skillId);
      if (!skill) throw skillNotFound(skillId);
      if (await project.isEnabled(skillId)) throw skillAlreadyEnabled(skillId);
      await checkToolCollisions(project, skillId, skill.tools);
      return { skill, enabledAt: await project.enable(skillId) };
    });
    if (result === NO_PROJECT) throw projectNotFound(projectId);
    this.skillTools.forgetProject(tenantId, projectId);
    return { projectId, skill: SkillResponseDto.from(result.skill), enabledAt: result.enabledAt.toISOString() };
  }

  async disable(tenantId: string, projectId: string, skillId: string): Promise<void> {
    if (!(await this.repository.disable(tenantId, projectId, skillId))) {
      // Nothing was disabled: a missing (or another tenant's) project says so before the skill does.
      await this.projects.assertOwned(tenantId, projectId);
      throw skillNotEnabled(skillId);
    }
    this.skillTools.forgetProject(tenantId, projectId);
  }

  // Another tenant's project answers like a missing one, not with an empty list.
  async enabledOn(tenantId: string, projectId: string): Promise<ProjectSkillListResponseDto> {
    await this.projects.assertOwned(tenantId, projectId);
    return { items: (await this.repository.enabledOnProject(tenantId, projectId)).map((s) => SkillResponseDto.from(s)) };
  }

  private async find(tenantId: string, skillId: string): Promise<SkillRecord> {
    const skill = await this.repository.findById(tenantId, skillId);
    if (!skill) throw skillNotFound(skillId);
    return skill;
  }

  // A body with an MCP `source` is checked, its tools imported from the server, and the result checked again.
  // The addresses it names are judged before any is contacted. A refusal may quote what it was given (a URL
  // that does not parse, an upstream's answer): never the credentials of its URLs and headers.
  // The tools come out pinned (their definition's hash): a tenant's own as written, an MCP source's as imported.
  private async parse(tenantId: string, body: unknown, user: string | null): Promise<{ skill: SkillBody; source: McpSource | null }> {
    try {
      const parsed = this.compiler.parseBody(body);
      await checkSkillEndpoints(parsed, this.config.tools.fetch.allowHosts);
      const { source, ...rest } = parsed as SkillBody & { source?: McpSource };
      if (!source) return { skill: { ...rest, tools: rest.tools.map(pinned) }, source: null };
      const imported = await this.importer.expand(tenantId, { ...rest, source }, user);
      // The import's review fields are Toolgate's own: the body check (which refuses them from a client) skips them.
      const checked = this.compiler.parseBody({ ...imported, tools: imported.tools.map(({ pin: _p, withheld: _w, ...tool }) => tool) });
      return { skill: { ...checked, tools: imported.tools }, source };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const secrets = bodySecrets(body);
      throw redactAppError(error, (text) => redactText(scrubWholeValues(text, secrets)));
    }
  }
}

const fields = (skill: SkillBody, source: McpSource | null) => ({
  name: skill.name,
  version: skill.version,
  description: skill.description,
  tools: skill.tools,
  source,
});

// A tenant's own tool, pinned as its admin wrote it; what the description rules find is recorded, not withheld.
function pinned(tool: SkillToolSpec): SkillToolSpec {
  const { name: _name, executor: _executor, ...definition } = tool;
  const flags = reviewDescriptions(tool);
  return { ...tool, pin: { hash: definitionHash(definition), reviewedAt: new Date().toISOString(), ...(flags.length > 0 && { flags }) } };
}

// The tools an import withheld for their descriptions, each as a change for an admin to review.
function flaggedAtImport(tools: SkillToolSpec[]): NewSkillChange[] {
  return tools
    .filter((tool) => tool.withheld === 'flagged' && tool.pin?.upstream)
    .map((tool) => ({
      tool: tool.pin!.upstream!.name,
      kind: 'added',
      previous: null,
      proposed: tool.pin!.upstream!,
      proposedHash: tool.pin!.hash,
      diff: definitionDiff(undefined, tool.pin!.upstream),
      flags: tool.pin!.flags ?? [],
      incompatible: false,
    }));
}

// The URL and header credentials a registration body holds, wherever they sit (its MCP source, its executors).
function bodySecrets(body: unknown): string[] {
  const { source, tools } = (typeof body === 'object' && body !== null ? body : {}) as { source?: unknown; tools?: unknown };
  const executors = [source, ...(Array.isArray(tools) ? tools.map((tool) => (tool as { executor?: unknown } | null)?.executor) : [])];
  return executors.flatMap((executor) => (typeof executor === 'object' && executor !== null ? executorSecrets(executor) : []));
}
