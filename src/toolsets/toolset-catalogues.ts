import { Inject, Injectable } from '@nestjs/common';
import { busTopic, ChangeBus } from '../common/bus/change-bus.js';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { ProjectChanges } from '../common/events/project-changes.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import { ProjectAccess } from '../projects/project-access.js';
import type { ToolCatalogue } from '../tools/tool-catalogue.js';
import type { RegisteredTool } from '../tools/tool-registry.js';
import { ToolsetView } from './toolset-view.js';
import { toolsetNotFound } from './toolsets.errors.js';
import { type ToolsetRecord, ToolsetsRepository } from './toolsets.repository.js';

interface ToolsetsChanged {
  tenantId: string;
  projectId: string;
}
const TOOLSETS_CHANGED = busTopic<ToolsetsChanged>('toolsets.changed');

const cacheKey = (tenantId: string, projectId: string, slug: string) => `${tenantId}\n${projectId}\n${slug}`;

// The toolsets the call path serves, off the database: each record cached by (tenant, project, slug) and
// dropped on every instance when a toolset of the project is written or the project changes (the change bus).
// A view (exposed tools, their validators, the search index) is kept per record and per tool list, weakly:
// a new record (the toolset changed) or a new tool list (the project's skills changed) builds a new one.
@Injectable()
export class ToolsetCatalogues {
  private readonly records: TtlLruCache<string, ToolsetRecord>;
  private readonly catalogues = new WeakMap<ToolsetRecord, ToolCatalogue>();
  private readonly views = new WeakMap<ToolsetRecord, WeakMap<readonly RegisteredTool[], ToolsetView>>();

  constructor(
    private readonly repository: ToolsetsRepository,
    private readonly projects: ProjectAccess,
    private readonly bus: ChangeBus,
    changes: ProjectChanges,
    metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.records = new TtlLruCache(config.workspace.cacheTtlMs, config.workspace.cacheMaxEntries);
    metrics.cache('toolsets', this.records);
    const forget = (tenantId: string, projectId: string) => {
      const prefix = `${tenantId}\n${projectId}\n`;
      this.records.deleteWhere((_record, key) => key.startsWith(prefix));
    };
    bus.subscribe(TOOLSETS_CHANGED, ({ tenantId, projectId }) => forget(tenantId, projectId));
    changes.subscribe(forget);
    bus.onResync(() => this.records.clear());
  }

  // Tells every instance that a toolset of this project was created, replaced or deleted.
  changed(tenantId: string, projectId: string): void {
    this.bus.publish(TOOLSETS_CHANGED, { tenantId, projectId });
  }

  // The project first (another tenant's is a 404 like a missing one), then the toolset.
  async catalogue(tenantId: string, projectId: string, slug: string): Promise<ToolCatalogue> {
    await this.projects.assertOwned(tenantId, projectId);
    const key = cacheKey(tenantId, projectId, slug);
    let record = this.records.get(key);
    if (!record) {
      const found = await this.repository.findBySlug(tenantId, projectId, slug);
      if (!found) throw toolsetNotFound(slug);
      record = found;
      this.records.set(key, record);
    }
    let catalogue = this.catalogues.get(record);
    if (!catalogue) {
      const held = record;
      catalogue = { toolset: held.slug, view: (tools) => this.view(held, tools) };
      this.catalogues.set(record, catalogue);
    }
    return catalogue;
  }

  view(record: ToolsetRecord, tools: readonly RegisteredTool[]): ToolsetView {
    let byTools = this.views.get(record);
    if (!byTools) this.views.set(record, (byTools = new WeakMap()));
    let view = byTools.get(tools);
    if (!view) byTools.set(tools, (view = new ToolsetView(record, tools)));
    return view;
  }
}
