import { Injectable } from '@nestjs/common';
import { tenantNotFound } from '../tenants/tenants.errors.js';
import type { TenantBudgetFigures } from '../config/app-config.js';
import { BudgetsRepository } from './budgets.repository.js';
import type { TenantBudgetsDto, TenantUsageResponseDto } from './dto/budgets.dto.js';
import { BUDGET_NAMES, TenantBudgets } from './tenant-budgets.js';

@Injectable()
export class BudgetsService {
  constructor(
    private readonly budgets: TenantBudgets,
    private readonly repository: BudgetsRepository,
  ) {}

  async usageOf(tenantId: string): Promise<TenantUsageResponseDto> {
    const budgets = await this.budgets.figures(tenantId);
    if (!budgets) throw tenantNotFound(tenantId);
    return { tenantId, budgets, usage: await this.budgets.usage(tenantId) };
  }

  // The figures the operator set for the tenant (a null one goes back to its default); answers those in force.
  async setOverrides(tenantId: string, dto: TenantBudgetsDto): Promise<TenantBudgetFigures> {
    const current = await this.repository.overrides(tenantId);
    if (!current) throw tenantNotFound(tenantId);
    const next: Partial<TenantBudgetFigures> = { ...current };
    for (const name of BUDGET_NAMES) {
      const value = dto[name];
      if (value === null) delete next[name];
      else if (value !== undefined) next[name] = value;
    }
    await this.repository.setOverrides(tenantId, next);
    return this.budgets.merge(next);
  }
}
