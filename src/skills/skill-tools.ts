import { Inject, Injectable } from '@nestjs/common';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { WORKER_POOL, type WorkerPool } from '../common/worker-pool/worker-pool.js';
import type { SkillWorkerTasks } from './executors/skill-worker-tasks.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { CommandSandbox } from '../sandbox/command-sandbox.js';
import type { Skill } from '../generated/prisma/client.js';
import type { ToolExecutor } from '../execution/tool-definition.js';
import type { CompiledToolValidator } from '../execution/validation/tool-validator.js';
import { SkillToolExecutor } from './executors/skill-tool.executor.js';
import { UpstreamMcpClients } from './mcp/upstream-mcp-clients.js';
import { type SkillBody, SkillCompiler } from './skill-compiler.js';
import { SkillsRepository } from './skills.repository.js';

export interface SkillTool {
  executor: ToolExecutor;
  validator: CompiledToolValidator;
}

export const skillSource = (skill: { name: string; version: string }) => `skill:${skill.name}@${skill.version}`;

// The tools a project gets from its enabled skills, cached per project (and invalidated when a skill is
// enabled, disabled, updated or deleted) so listing and invoking stay off the database.
@Injectable()
export class SkillTools {
  private readonly byProject: TtlLruCache<string, SkillTool[]>;
  // Bumped by every invalidation: a load that started before one may have read the old skills, so it is
  // answered but not cached (it would otherwise hide the change until the TTL).
  private generation = 0;

  constructor(
    private readonly repository: SkillsRepository,
    private readonly compiler: SkillCompiler,
    @Inject(WORKER_POOL) private readonly pool: WorkerPool<SkillWorkerTasks>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sandbox: CommandSandbox,
    private readonly upstreams: UpstreamMcpClients,
  ) {
    this.byProject = new TtlLruCache(config.workspace.cacheTtlMs, config.workspace.cacheMaxEntries);
  }

  async forProject(tenantId: string, projectId: string): Promise<SkillTool[]> {
    const key = `${tenantId}:${projectId}`;
    const cached = this.byProject.get(key);
    if (cached) return cached;
    const generation = this.generation;
    const skills = await this.repository.enabledOnProject(tenantId, projectId);
    const tools = skills.flatMap((skill) => this.toolsOf(skill));
    if (generation === this.generation) this.byProject.set(key, tools);
    return tools;
  }

  toolsOf(skill: Skill): SkillTool[] {
    const body = { name: skill.name, version: skill.version, description: skill.description, tools: skill.tools } as unknown as SkillBody;
    return this.compiler.load(skill.id, body, skillSource(skill)).map((tool) => ({
      executor: new SkillToolExecutor(tool, skill.signingSecret, this.config, this.pool, this.sandbox, this.upstreams),
      validator: tool.validator,
    }));
  }

  forgetProject(tenantId: string, projectId: string): void {
    this.generation++;
    this.byProject.delete(`${tenantId}:${projectId}`);
  }

  forgetTenant(tenantId: string): void {
    this.generation++;
    this.byProject.deleteWhere((_, key) => key.startsWith(`${tenantId}:`));
  }
}
