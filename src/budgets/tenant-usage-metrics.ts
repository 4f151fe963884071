import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import { TenantStorage } from '../workspace/tenant-storage.js';
import { TenantBudgets } from './tenant-budgets.js';
import { BUDGET_NAMES, type BudgetName } from './tenant-usage.js';
import { InstanceUsage } from './instance-usage.js';

// A tenant not active for this long drops out of the metrics.
const ACTIVE_WINDOW_MS = 15 * 60_000;

type Sample = { labels: Record<'tenant' | 'budget', string>; value: number };

// Each tenant's usage and budgets as gauges, `toolgate_tenant_usage{tenant, budget}` and
// `toolgate_tenant_budget{tenant, budget}`, the tenant label its id. Cardinality is bounded: only the
// METRICS_TENANTS tenants (100) most recently active on this instance (a budget checked: a write, a
// command, a project created, usage read) within 15 minutes, one sample per budget each. Read when scraped: the
// database's counts, and storage from the figures the workspaces' quotas hold (measured at most 30 s
// before, or the last full count while they have expired; a workspace never measured since start-up
// counts 0 until it is), so a scrape walks no directory.
@Injectable()
export class TenantUsageMetrics {
  private readonly logger = new Logger('TenantUsageMetrics');
  private readonly limit: number;
  // Tenant id -> when last active, oldest first.
  private readonly active = new Map<string, number>();
  // The last storage figures counted in full, by tenant: kept while its workspaces' figures expire.
  private readonly storage = new Map<string, { bytes: number; inodes: number }>();

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    metrics: Metrics,
    private readonly budgets: TenantBudgets,
    private readonly tenantStorage: TenantStorage,
    private readonly instance: InstanceUsage,
  ) {
    this.limit = config.metrics.tenants;
    budgets.onActive((tenantId) => this.touch(tenantId));
    metrics.labelledGauges(
      [
        {
          name: 'toolgate_tenant_usage',
          help: 'What a recently active tenant holds now, by budget (bytes, counts); at most METRICS_TENANTS tenants',
          labelNames: ['tenant', 'budget'],
        },
        {
          name: 'toolgate_tenant_budget',
          help: 'The budgets in force for a recently active tenant; at most METRICS_TENANTS tenants',
          labelNames: ['tenant', 'budget'],
        },
      ],
      () => this.read(),
    );
  }

  touch(tenantId: string): void {
    if (this.limit === 0) return;
    this.active.delete(tenantId);
    this.active.set(tenantId, Date.now());
    if (this.active.size > this.limit) this.forget(this.active.keys().next().value!);
  }

  private forget(tenantId: string): void {
    this.active.delete(tenantId);
    this.storage.delete(tenantId);
  }

  private async read(): Promise<Sample[][]> {
    const since = Date.now() - ACTIVE_WINDOW_MS;
    for (const [tenantId, at] of this.active) if (at < since) this.forget(tenantId);
    const usage: Sample[] = [];
    const figures: Sample[] = [];
    // A snapshot: tenants become active while this reads.
    for (const tenantId of [...this.active.keys()]) {
      try {
        const budgets = await this.budgets.figures(tenantId, { track: false });
        // Deleted meanwhile.
        if (!budgets) {
          this.forget(tenantId);
          continue;
        }
        const [counted, known] = await Promise.all([
          this.budgets.usage(tenantId),
          this.tenantStorage.usage(tenantId, { cachedOnly: true }),
        ]);
        if (known.complete) this.storage.set(tenantId, { bytes: known.bytes, inodes: known.inodes });
        const storage = known.complete ? known : (this.storage.get(tenantId) ?? known);
        const held: Record<BudgetName, number> = {
          ...counted,
          ...this.instance.of(tenantId),
          storageBytes: storage.bytes,
          storageInodes: storage.inodes,
        };
        for (const budget of BUDGET_NAMES) {
          usage.push({ labels: { tenant: tenantId, budget }, value: held[budget] });
          figures.push({ labels: { tenant: tenantId, budget }, value: budgets[budget] });
        }
      } catch (error) {
        this.logger.warn(
          `The usage of tenant ${tenantId} could not be read for the metrics: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    return [usage, figures];
  }
}
