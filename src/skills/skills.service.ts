import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { decodeCursor, type Page, toPage } from '../common/pagination/cursor.js';
import { Prisma, type Skill } from '../generated/prisma/client.js';
import { projectNotFound } from '../projects/projects.errors.js';
import { BUILTIN_TOOL_NAMES } from '../tools/builtin-tool-names.js';
import { type SkillBody, SkillCompiler } from './skill-compiler.js';
import { skillSource, SkillTools } from './skill-tools.js';
import {
  skillAlreadyEnabled,
  skillNameTaken,
  skillNotEnabled,
  skillNotFound,
  skillVersionExists,
  type ToolCollision,
  toolNameCollision,
} from './skills.errors.js';
import { SkillsRepository } from './skills.repository.js';
import { type McpSource, McpSkillImporter } from './mcp/mcp-skill-importer.js';

type Tx = Prisma.TransactionClient;

@Injectable()
export class SkillsService {
  constructor(
    private readonly repository: SkillsRepository,
    private readonly compiler: SkillCompiler,
    private readonly skillTools: SkillTools,
    private readonly importer: McpSkillImporter,
  ) {}

  // Vetted and compiled before anything is stored; the signing secret is returned this once.
  async register(tenantId: string, body: unknown): Promise<{ skill: Skill; signingSecret: string }> {
    const parsed = await this.parse(tenantId, body);
    const tools = this.compiler.vet(parsed, skillSource(parsed));
    const signingSecret = `tgs_${randomBytes(32).toString('hex')}`;
    let skill: Skill;
    try {
      skill = await this.repository.create(tenantId, fields(parsed), signingSecret);
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') throw skillNameTaken(parsed.name);
      throw error;
    }
    this.compiler.remember(skill.id, skill.version, tools);
    return { skill, signingSecret };
  }

  async list(tenantId: string, limit: number, cursor: string | undefined): Promise<Page<Skill>> {
    const rows = await this.repository.listPage(tenantId, limit, cursor ? decodeCursor(cursor) : null);
    return toPage(rows, limit, (s) => s);
  }

  async get(tenantId: string, skillId: string): Promise<Skill> {
    const skill = await this.repository.findById(tenantId, skillId);
    if (!skill) throw skillNotFound(skillId);
    return skill;
  }

  // A new version: same name, new tools. Every project it is enabled on must still have unique names.
  async update(tenantId: string, skillId: string, body: unknown): Promise<Skill> {
    const current = await this.get(tenantId, skillId);
    const parsed = await this.parse(tenantId, body);
    if (parsed.name !== current.name) parsed.name = current.name;
    if (parsed.version === current.version) throw skillVersionExists(parsed.version);
    const tools = this.compiler.vet(parsed, skillSource(parsed));
    const updated = await this.repository.transaction(async (tx) => {
      for (const projectId of await this.repository.projectsWithSkill(skillId, tx)) {
        await this.repository.lockProject(tenantId, projectId, tx);
        await this.checkCollisions(tenantId, projectId, skillId, parsed, tx);
      }
      return this.repository.update(tenantId, skillId, fields(parsed), tx);
    });
    if (!updated) throw skillNotFound(skillId);
    this.compiler.remember(updated.id, updated.version, tools);
    this.skillTools.forgetTenant(tenantId);
    return updated;
  }

  async delete(tenantId: string, skillId: string): Promise<void> {
    if (!(await this.repository.delete(tenantId, skillId))) throw skillNotFound(skillId);
    this.compiler.forget(skillId);
    this.skillTools.forgetTenant(tenantId);
  }

  async enable(tenantId: string, projectId: string, skillId: string): Promise<{ skill: Skill; enabledAt: Date }> {
    const result = await this.repository.transaction(async (tx) => {
      if (!(await this.repository.lockProject(tenantId, projectId, tx))) throw projectNotFound(projectId);
      const skill = await this.repository.findById(tenantId, skillId, tx);
      if (!skill) throw skillNotFound(skillId);
      if (await this.repository.isEnabled(projectId, skillId, tx)) throw skillAlreadyEnabled(skillId);
      await this.checkCollisions(tenantId, projectId, skillId, skill as unknown as SkillBody, tx);
      return { skill, enabledAt: await this.repository.enable(projectId, skillId, tx) };
    });
    this.skillTools.forgetProject(tenantId, projectId);
    return result;
  }

  async disable(tenantId: string, projectId: string, skillId: string): Promise<void> {
    if (!(await this.repository.disable(tenantId, projectId, skillId))) {
      await this.repository.transaction(async (tx) => {
        if (!(await this.repository.lockProject(tenantId, projectId, tx))) throw projectNotFound(projectId);
      });
      throw skillNotEnabled(skillId);
    }
    this.skillTools.forgetProject(tenantId, projectId);
  }

  // Another tenant's project answers like a missing one, not with an empty list.
  async enabledOn(tenantId: string, projectId: string): Promise<Skill[]> {
    if (!(await this.repository.projectExists(tenantId, projectId))) throw projectNotFound(projectId);
    return this.repository.enabledOnProject(tenantId, projectId);
  }

  // A body with an MCP `source` is checked, its tools imported from the server, and the result checked again.
  private async parse(tenantId: string, body: unknown): Promise<SkillBody> {
    const parsed = this.compiler.parseBody(body);
    const { source } = parsed as SkillBody & { source?: McpSource };
    if (!source) return parsed;
    return this.compiler.parseBody(await this.importer.expand(tenantId, { ...parsed, source }));
  }

  private async checkCollisions(tenantId: string, projectId: string, skillId: string, skill: SkillBody, tx: Tx): Promise<void> {
    const taken = new Map<string, string>(BUILTIN_TOOL_NAMES.map((name) => [name, 'builtin']));
    for (const other of await this.repository.enabledOnProject(tenantId, projectId, tx)) {
      if (other.id === skillId) continue;
      for (const tool of other.tools as unknown as SkillBody['tools']) taken.set(tool.name, skillSource(other));
    }
    const collisions: ToolCollision[] = skill.tools
      .filter((tool) => taken.has(tool.name))
      .map((tool) => ({ tool: tool.name, conflictsWith: taken.get(tool.name)! }));
    if (collisions.length > 0) throw toolNameCollision(collisions);
  }
}

const fields = (skill: SkillBody) => ({
  name: skill.name,
  version: skill.version,
  description: skill.description,
  tools: skill.tools as unknown as Prisma.InputJsonValue,
});
