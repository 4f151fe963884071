import { CommandAdmission } from '../budgets/command-admission.js';
import { Inject, Injectable } from '@nestjs/common';
import { busTopic, ChangeBus } from '../common/bus/change-bus.js';
import { Metrics } from '../metrics/metrics.js';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { ProjectChanges } from '../common/events/project-changes.js';
import { WORKER_POOL, type WorkerPool } from '../common/worker-pool/worker-pool.js';
import type { SkillWorkerTasks } from './executors/skill-worker-tasks.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { CommandSandbox } from '../sandbox/command-sandbox.js';
import { WorkspaceQuota } from '../workspace/workspace-quota.js';
import { TenantStorage } from '../workspace/tenant-storage.js';
import type { ToolExecutor } from '../execution/tool-definition.js';
import type { CompiledToolValidator } from '../execution/validation/tool-validator.js';
import { SkillToolExecutor } from './executors/skill-tool.executor.js';
import { ConnectionTokens } from '../connections/connection-tokens.js';
import { UpstreamMcpClients } from './mcp/upstream-mcp-clients.js';
import { ModernUpstreams } from './mcp/modern-upstream.js';
import { type SkillBody, SkillCompiler } from './skill-compiler.js';
import { type SkillRecord, SkillsRepository } from './skills.repository.js';

export interface SkillTool {
  executor: ToolExecutor;
  validator: CompiledToolValidator;
}

// A project's enabled skills changed, or (no projectId) any of the tenant's skills; `skillId`: a deleted
// skill whose compiled validators go too.
interface SkillsChanged {
  tenantId: string;
  projectId?: string;
  deletedSkillId?: string;
}
const SKILLS_CHANGED = busTopic<SkillsChanged>('skills.changed');

export const skillSource = (skill: { name: string; version: string }) => `skill:${skill.name}@${skill.version}`;
// Names the stored tools of a skill: a new version, or a reviewed change (which keeps the version), gives a new one.
export const skillRevision = (skill: { version: string; updatedAt: Date }) => `${skill.version}@${skill.updatedAt.getTime()}`;

// The tools a project gets from its enabled skills, cached per project (and invalidated when a skill is
// enabled, disabled, updated or deleted, on every instance through the change bus) so listing and invoking
// stay off the database.
@Injectable()
export class SkillTools {
  private readonly byProject: TtlLruCache<string, SkillTool[]>;

  constructor(
    private readonly repository: SkillsRepository,
    private readonly compiler: SkillCompiler,
    @Inject(WORKER_POOL) private readonly pool: WorkerPool<SkillWorkerTasks>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sandbox: CommandSandbox,
    private readonly upstreams: UpstreamMcpClients,
    private readonly quota: WorkspaceQuota,
    private readonly storage: TenantStorage,
    private readonly admission: CommandAdmission,
    private readonly tokens: ConnectionTokens,
    changes: ProjectChanges,
    metrics: Metrics,
    private readonly bus: ChangeBus,
    private readonly modern: ModernUpstreams,
  ) {
    this.byProject = new TtlLruCache(config.workspace.cacheTtlMs, config.workspace.cacheMaxEntries);
    metrics.cache('skill_tools', this.byProject);
    // The project's own change already went to every instance: each forgets here only.
    changes.subscribe((tenantId, projectId) => this.forgetProjectHere(tenantId, projectId));
    bus.subscribe(SKILLS_CHANGED, ({ tenantId, projectId, deletedSkillId }) => {
      if (deletedSkillId) this.compiler.forget(deletedSkillId);
      if (projectId) this.forgetProjectHere(tenantId, projectId);
      else this.forgetTenantHere(tenantId);
    });
    bus.onResync(() => this.byProject.clear());
  }

  async forProject(tenantId: string, projectId: string): Promise<SkillTool[]> {
    const key = `${tenantId}:${projectId}`;
    const cached = this.byProject.get(key);
    if (cached) return cached;
    // Skills read while they changed are answered but not cached.
    const version = this.byProject.version;
    const skills = await this.repository.enabledOnProject(tenantId, projectId);
    const tools = skills.flatMap((skill) => this.toolsOf(skill));
    this.byProject.setIfUnchanged(version, key, tools);
    return tools;
  }

  toolsOf(skill: SkillRecord): SkillTool[] {
    const body: SkillBody = { name: skill.name, version: skill.version, description: skill.description, tools: skill.tools };
    // A withheld tool (src/skills/review) is compiled with the others but neither listed nor callable.
    return this.compiler
      .load(skill.id, skillRevision(skill), body, skillSource(skill))
      .filter((tool) => tool.spec.withheld === undefined)
      .map((tool) => ({
        executor: new SkillToolExecutor(
          tool,
          skill.signingSecret,
          this.config,
          this.pool,
          this.sandbox,
          this.upstreams,
          this.quota,
          this.storage,
          this.admission,
          this.tokens,
          this.modern,
        ),
        validator: tool.validator,
      }));
  }

  // On every instance: a skill was enabled on or disabled from the project.
  forgetProject(tenantId: string, projectId: string): void {
    this.bus.publish(SKILLS_CHANGED, { tenantId, projectId });
  }

  // On every instance: one of the tenant's skills was updated or deleted (and its validators with it).
  forgetTenant(tenantId: string, deletedSkillId?: string): void {
    this.bus.publish(SKILLS_CHANGED, { tenantId, ...(deletedSkillId ? { deletedSkillId } : {}) });
  }

  // This instance only, for a change already carried by the bus (the project itself changed).
  private forgetProjectHere(tenantId: string, projectId: string): void {
    this.byProject.delete(`${tenantId}:${projectId}`);
  }

  private forgetTenantHere(tenantId: string): void {
    this.byProject.deleteWhere((_, key) => key.startsWith(`${tenantId}:`));
  }
}
