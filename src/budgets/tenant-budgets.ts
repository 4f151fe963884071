import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, type TenantBudgetFigures } from '../config/app-config.js';
import { BudgetsRepository } from './budgets.repository.js';
import { BUDGET_NAMES, type DatabaseUsage } from './tenant-usage.js';

// A tenant's budgets: the operator's defaults (TENANT_* settings) with the figures set for this tenant on
// top. Read from its row where it is checked, so a change holds on every instance at once.
@Injectable()
export class TenantBudgets {
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
