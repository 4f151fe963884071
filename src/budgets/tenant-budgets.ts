import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, type TenantBudgetFigures } from '../config/app-config.js';
import { BudgetsRepository } from './budgets.repository.js';

export type BudgetName = keyof TenantBudgetFigures;
export const BUDGET_NAMES: readonly BudgetName[] = ['maxProjects', 'concurrentCommands', 'commandMemoryBytes', 'storedAnswerBytes'];

// What a tenant holds now, budget by budget (figures of every instance together, from the database).
export interface TenantUsage {
  maxProjects: number;
  concurrentCommands: number;
  commandMemoryBytes: number;
  storedAnswerBytes: number;
}

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

  // Null: no such tenant.
  async figures(tenantId: string): Promise<TenantBudgetFigures | null> {
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

  usage(tenantId: string): Promise<TenantUsage> {
    return this.repository.usage(tenantId);
  }
}
