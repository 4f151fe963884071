import { InProcessChangeBus } from '../common/bus/change-bus.js';
import { ProjectChanges } from '../common/events/project-changes.js';
import type { AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import { type ProjectSettings, ProjectAccess } from './project-access.js';
import type { ProjectsRepository } from './projects.repository.js';

const settings = (workspacePath: string | null): ProjectSettings => ({
  workspacePath,
  shellEnabled: false,
  shellAllowlist: [],
  approvalRequired: [],
});

// The project rows as the database answers them; each read waits until the test releases it.
class ControlledRows {
  reads = 0;
  rows = new Map<string, ProjectSettings>([['t:p', settings('/first')]]);
  private pending: Array<() => void> = [];

  readonly repository = {
    findSettings: (tenantId: string, projectId: string) => {
      this.reads++;
      const row = this.rows.get(`${tenantId}:${projectId}`) ?? null;
      return new Promise<ProjectSettings | null>((resolve) => this.pending.push(() => resolve(row)));
    },
  } as unknown as ProjectsRepository;

  release(): void {
    for (const resolve of this.pending.splice(0)) resolve();
  }
}

const config = { workspace: { cacheTtlMs: 60_000, cacheMaxEntries: 100 } } as AppConfig;

describe('ProjectAccess', () => {
  let rows: ControlledRows;
  let changes: ProjectChanges;
  let access: ProjectAccess;
  beforeEach(() => {
    rows = new ControlledRows();
    const bus = new InProcessChangeBus();
    changes = new ProjectChanges(bus);
    access = new ProjectAccess(rows.repository, config, changes, new Metrics({ defaultMetrics: false }), bus);
  });

  it('reads a project once and answers from the cache until the project changes', async () => {
    const first = access.settings('t', 'p');
    rows.release();
    expect(await first).toEqual(settings('/first'));
    expect(await access.settings('t', 'p')).toEqual(settings('/first'));
    expect(rows.reads).toBe(1);

    rows.rows.set('t:p', settings('/second'));
    changes.changed('t', 'p');
    const reloaded = access.settings('t', 'p');
    rows.release();
    expect(await reloaded).toEqual(settings('/second'));
    expect(rows.reads).toBe(2);
  });

  it('answers another tenant exactly like a missing project, and caches neither', async () => {
    const foreign = access.settings('other', 'p');
    rows.release();
    await expect(foreign).rejects.toMatchObject({ status: 404, code: 'project_not_found', message: "No project with id 'p'" });
    const again = access.assertOwned('other', 'p');
    rows.release();
    await expect(again).rejects.toMatchObject({ code: 'project_not_found' });
    expect(rows.reads).toBe(2);
  });

  it('does not cache a row read before a change that landed while it was in flight', async () => {
    const stale = access.settings('t', 'p');
    rows.rows.set('t:p', settings('/second'));
    changes.changed('t', 'p');
    rows.release();
    expect(await stale).toEqual(settings('/first'));

    const fresh = access.settings('t', 'p');
    rows.release();
    expect(await fresh).toEqual(settings('/second'));
    expect(rows.reads).toBe(2);
  });
});
