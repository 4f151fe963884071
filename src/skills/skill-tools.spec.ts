import type { ConnectionTokens } from '../connections/connection-tokens.js';
import type { CommandAdmission } from '../budgets/command-admission.js';
import { InProcessChangeBus } from '../common/bus/change-bus.js';
import type { WorkerPool } from '../common/worker-pool/worker-pool.js';
import { Metrics } from '../metrics/metrics.js';
import type { SkillWorkerTasks } from './executors/skill-worker-tasks.js';
import type { CommandSandbox } from '../sandbox/command-sandbox.js';
import type { AppConfig } from '../config/app-config.js';
import type { Skill } from '../generated/prisma/client.js';
import type { SkillCompiler } from './skill-compiler.js';
import type { UpstreamMcpClients } from './mcp/upstream-mcp-clients.js';
import type { ModernUpstreams } from './mcp/modern-upstream.js';
import type { TenantStorage } from '../workspace/tenant-storage.js';
import type { WorkspaceQuota } from '../workspace/workspace-quota.js';
import { ProjectChanges } from '../common/events/project-changes.js';
import { SkillTools } from './skill-tools.js';
import type { SkillsRepository } from './skills.repository.js';

// The enabled skills of a project as the database answers them; each read waits until the test releases it.
class ControlledSkills {
  reads = 0;
  private pending: Array<() => void> = [];

  readonly repository = {
    enabledOnProject: () => {
      this.reads++;
      return new Promise<Skill[]>((resolve) => this.pending.push(() => resolve([])));
    },
  } as unknown as SkillsRepository;

  release(): void {
    for (const resolve of this.pending.splice(0)) resolve();
  }
}

const config = { workspace: { cacheTtlMs: 60_000, cacheMaxEntries: 100 } } as AppConfig;
const skillToolsOn = (skills: ControlledSkills) => {
  const bus = new InProcessChangeBus();
  return new SkillTools(
    skills.repository,
    {} as SkillCompiler,
    {} as WorkerPool<SkillWorkerTasks>,
    config,
    {} as CommandSandbox,
    {} as UpstreamMcpClients,
    {} as WorkspaceQuota,
    {} as TenantStorage,
    {} as CommandAdmission,
    {} as ConnectionTokens,
    new ProjectChanges(bus),
    new Metrics({ defaultMetrics: false }),
    bus,
    {} as ModernUpstreams,
  );
};

describe('SkillTools', () => {
  it("reads a project's skills once and answers the same array until it is invalidated", async () => {
    const skills = new ControlledSkills();
    const tools = skillToolsOn(skills);
    const first = tools.forProject('t', 'p');
    skills.release();
    const cached = await first;
    expect(await tools.forProject('t', 'p')).toBe(cached);
    expect(skills.reads).toBe(1);

    tools.forgetProject('t', 'p');
    const reloaded = tools.forProject('t', 'p');
    skills.release();
    expect(await reloaded).not.toBe(cached);
    expect(skills.reads).toBe(2);
  });

  it('does not cache a read that an invalidation overtook, so the change is seen on the next call', async () => {
    for (const invalidate of [(t: SkillTools) => t.forgetProject('t', 'p'), (t: SkillTools) => t.forgetTenant('t')]) {
      const skills = new ControlledSkills();
      const tools = skillToolsOn(skills);
      const overtaken = tools.forProject('t', 'p');
      // A skill is enabled (and the cache told) while the read of the old skills is still under way.
      invalidate(tools);
      skills.release();
      await overtaken;

      const next = tools.forProject('t', 'p');
      skills.release();
      await next;
      expect(skills.reads).toBe(2);
    }
  });
});
