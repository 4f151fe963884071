import { Inject, Injectable } from '@nestjs/common';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { APP_CONFIG, type AppConfig, type TenantBudgetFigures } from '../config/app-config.js';
import { BudgetsRepository } from './budgets.repository.js';
import { BUDGET_NAMES, type DatabaseUsage } from './tenant-usage.js';
import type { AppError } from '../common/errors/app-error.js';
import { tenantBudgetExceeded } from './budgets.errors.js';

// How long the figures checked on every call (CallAdmission, UnreadAnswers, AuditAllowance) are used before the
// tenant's row is read again: a change made on another instance holds there within this, one made here at once.
const CURRENT_FRESH_MS = 5_000;
// Kept (and answered by `currentNow` while read again) this long at most after they were read.
const CURRENT_KEPT_MS = 60_000;
const CURRENT_CACHED = 10_000;

// A tenant's budgets: the operator's defaults (TENANT_* settings) with the figures set for this tenant on
// top. Read from its row where it is checked, so a change holds on every instance at once; the figures
// checked on every call are read through a cache of a few seconds (`current`, `currentNow`).
@Injectable()
export class TenantBudgets {
  private readonly cached = new TtlLruCache<string, { figures: TenantBudgetFigures; readAt: number }>(CURRENT_KEPT_MS, CURRENT_CACHED);
  private readonly reading = new Map<string, Promise<TenantBudgetFigures>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: BudgetsRepository,
  ) {}

  get defaults(): TenantBudgetFigures {
    return this.config.budgets;
  }

  // Called with a tenant whose budgets were just consulted (the metrics follow the active tenants).
  private readonly activity: Array<(tenantId: string) => void> = [];

  onActive(listener: (tenantId: string) => void): void {
    this.activity.push(listener);
  }

  active(tenantId: string): void {
    for (const listener of this.activity) listener(tenantId);
  }

  // Null: no such tenant. `track`: false for a look that is no activity of the tenant's (the metrics').
  async figures(tenantId: string, { track = true } = {}): Promise<TenantBudgetFigures | null> {
    if (track) this.active(tenantId);
    const overrides = await this.repository.overrides(tenantId);
    return overrides && this.merge(overrides);
  }

  // The figures in force, read at most CURRENT_FRESH_MS before. A tenant deleted meanwhile has the defaults
  // (its calls are refused further on, by the gate).
  async current(tenantId: string): Promise<TenantBudgetFigures> {
    const entry = this.cached.get(tenantId);
    if (entry && Date.now() - entry.readAt <= CURRENT_FRESH_MS) return entry.figures;
    return this.read(tenantId);
  }

  // Never waits, for a check made on a path that must not (an audit row): the figures last read, or the
  // defaults, while they are read again.
  currentNow(tenantId: string): TenantBudgetFigures {
    const entry = this.cached.get(tenantId);
    if (!entry || Date.now() - entry.readAt > CURRENT_FRESH_MS) void this.read(tenantId).catch(() => undefined);
    return entry?.figures ?? this.config.budgets;
  }

  // The operator changed the tenant's figures here: in force on this instance at once.
  remember(tenantId: string, figures: TenantBudgetFigures): void {
    this.cached.set(tenantId, { figures, readAt: Date.now() });
  }

  // One read of the row at a time per tenant, whoever asks.
  private read(tenantId: string): Promise<TenantBudgetFigures> {
    let reading = this.reading.get(tenantId);
    if (!reading) {
      // Figures the operator set here while the row was read are newer: a read stores its own only where the
      // entry it began with is still there.
      const before = this.cached.get(tenantId);
      reading = this.figures(tenantId)
        .then((figures) => {
          const current = figures ?? this.config.budgets;
          if (this.cached.get(tenantId) === before) this.cached.set(tenantId, { figures: current, readAt: Date.now() });
          return current;
        })
        .finally(() => this.reading.delete(tenantId));
      this.reading.set(tenantId, reading);
    }
    return reading;
  }

  // A budget on things the tenant keeps, checked under its row lock (BudgetsRepository.withTenantLocked) before
  // one more is made: the refusal when the `count` it has already fills it, else null.
  refusalForOneMore(
    overrides: Partial<TenantBudgetFigures>,
    budget: 'maxProjects' | 'maxSkills' | 'maxToolsets',
    count: number,
    advice: string,
  ): AppError | null {
    const limit = this.merge(overrides)[budget];
    return count >= limit ? tenantBudgetExceeded(budget, limit, count, 1, advice) : null;
  }

  merge(overrides: Partial<TenantBudgetFigures>): TenantBudgetFigures {
    const figures = { ...this.config.budgets };
    for (const name of BUDGET_NAMES) {
      const value = overrides[name];
      if (typeof value === 'number' && Number.isSafeInteger(value)) figures[name] = value;
    }
    return figures;
  }

  // What the database counts (calls in progress are counted by each instance: CallAdmission; storage is
  // measured on disk: TenantStorage).
  usage(tenantId: string): Promise<DatabaseUsage> {
    return this.repository.usage(tenantId);
  }
}
