import { Inject, Injectable } from '@nestjs/common';
import { ChangeBus } from '../common/bus/change-bus.js';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { ProjectChanges } from '../common/events/project-changes.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import { projectNotFound } from './projects.errors.js';
import type { ProjectSettings } from './project-settings.js';
import { ProjectsRepository } from './projects.repository.js';

export type { ProjectSettings } from './project-settings.js';

// The one answer to "is this the tenant's project?", for every feature that acts inside a project
// (workspace, tools, skills, audit, calls). One cached row per project, so the call path stays off the
// database; an update or delete (ProjectChanges, on every instance through the change bus) drops the entry
// at once. While the bus is down the TTL bounds how long a change made on another instance goes unseen, and
// everything is dropped when it is back.
@Injectable()
export class ProjectAccess {
  private readonly cache: TtlLruCache<string, ProjectSettings>;

  constructor(
    private readonly repository: ProjectsRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    changes: ProjectChanges,
    metrics: Metrics,
    bus: ChangeBus,
  ) {
    this.cache = new TtlLruCache(config.workspace.cacheTtlMs, config.workspace.cacheMaxEntries);
    metrics.cache('projects', this.cache);
    changes.subscribe((tenantId, projectId) => this.forget(tenantId, projectId));
    bus.onResync(() => this.cache.clear());
  }

  // The project's settings, or 404 project_not_found: another tenant's project answers exactly like a
  // missing one.
  async settings(tenantId: string, projectId: string): Promise<ProjectSettings> {
    const key = cacheKey(tenantId, projectId);
    const cached = this.cache.get(key);
    if (cached) return cached;
    // A row read while the project changed is answered but not cached.
    const version = this.cache.version;
    const settings = await this.repository.findSettings(tenantId, projectId);
    if (!settings) throw projectNotFound(projectId);
    this.cache.setIfUnchanged(version, key, settings);
    return settings;
  }

  // For routes that only need the question answered (listings of a project's audit rows, skills).
  async assertOwned(tenantId: string, projectId: string): Promise<void> {
    await this.settings(tenantId, projectId);
  }

  private forget(tenantId: string, projectId: string): void {
    this.cache.delete(cacheKey(tenantId, projectId));
  }
}

const cacheKey = (tenantId: string, projectId: string) => `${tenantId}:${projectId}`;
