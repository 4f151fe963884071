import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { decodeCursor, toPage } from '../common/pagination/cursor.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { UNIQUE_TAKEN } from '../database/unique-violation.js';
import { ProjectAccess } from '../projects/project-access.js';
import { projectNotFound } from '../projects/projects.errors.js';
import { type SkillBody, SkillCompiler, type SkillToolSpec } from './skill-compiler.js';
import { checkToolCollisions } from './tool-collisions.js';
import { definitionDiff, definitionHash } from './review/definition-pin.js';
import { reviewDescriptions } from './review/description-rules.js';
import type { NewSkillChange } from './review/skill-changes.repository.js';
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
  ) {}

  // Vetted and compiled before anything is stored; the signing secret is returned this once.
  // The tools are pinned as registered; an MCP source's tools the description rules flag are kept withheld,
  // each with a change waiting for an admin's review (src/skills/review).
  async register(tenantId: string, body: unknown): Promise<RegisteredSkillResponseDto> {
    const { skill: parsed, source } = await this.parse(tenantId, body);
    const tools = this.compiler.vet(parsed, skillSource(parsed));
    const signingSecret = `tgs_${randomBytes(32).toString('hex')}`;
    const skill = await this.repository.create(tenantId, fields(parsed, source), signingSecret, flaggedAtImport(parsed.tools));
    if (skill === UNIQUE_TAKEN) throw skillNameTaken(parsed.name);
    this.compiler.remember(skill.id, skillRevision(skill), tools);
    return { ...SkillResponseDto.from(skill), signingSecret };
  }

  async list(tenantId: string, limit: number, cursor: string | undefined): Promise<SkillListResponseDto> {
    const rows = await this.repository.listPage(tenantId, limit, cursor ? decodeCursor(cursor) : null);
    return toPage(rows, limit, (s) => SkillResponseDto.from(s));
  }

  async get(tenantId: string, skillId: string): Promise<SkillResponseDto> {
    return SkillResponseDto.from(await this.find(tenantId, skillId));
  }

  // A new version: same name, new tools. Every project it is enabled on must still have unique names.
  async update(tenantId: string, skillId: string, body: unknown): Promise<SkillResponseDto> {
    const current = await this.find(tenantId, skillId);
    const { skill: parsed, source } = await this.parse(tenantId, body);
    if (parsed.name !== current.name) parsed.name = current.name;
    if (parsed.version === current.version) throw skillVersionExists(parsed.version);
    const tools = this.compiler.vet(parsed, skillSource(parsed));
    const updated = await this.repository.updateChecked(
      tenantId,
      skillId,
      fields(parsed, source),
      (project) => checkToolCollisions(project, skillId, parsed.tools),
      flaggedAtImport(parsed.tools),
    );
    if (!updated) throw skillNotFound(skillId);
    this.compiler.remember(updated.id, skillRevision(updated), tools);
    this.skillTools.forgetTenant(tenantId);
    return SkillResponseDto.from(updated);
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
  private async parse(tenantId: string, body: unknown): Promise<{ skill: SkillBody; source: McpSource | null }> {
    try {
      const parsed = this.compiler.parseBody(body);
      await checkSkillEndpoints(parsed, this.config.tools.fetch.allowHosts);
      const { source, ...rest } = parsed as SkillBody & { source?: McpSource };
      if (!source) return { skill: { ...rest, tools: rest.tools.map(pinned) }, source: null };
      const imported = await this.importer.expand(tenantId, { ...rest, source });
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
