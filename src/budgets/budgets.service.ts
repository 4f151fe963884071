import { Injectable } from '@nestjs/common';
import { tenantNotFound } from '../tenants/tenants.errors.js';
import type { TenantBudgetFigures } from '../config/app-config.js';
import { BudgetsRepository } from './budgets.repository.js';
import type { TenantBudgetsDto, TenantUsageResponseDto } from './dto/budgets.dto.js';
import { TenantBudgets } from './tenant-budgets.js';
import { BUDGET_NAMES } from './tenant-usage.js';
import { TenantStorage } from '../workspace/tenant-storage.js';
import { InstanceUsage } from './instance-usage.js';

@Injectable()
export class BudgetsService {
  constructor(
    private readonly budgets: TenantBudgets,
    private readonly repository: BudgetsRepository,
    private readonly instance: InstanceUsage,
    private readonly storage: TenantStorage,
  ) {}

  async usageOf(tenantId: string): Promise<TenantUsageResponseDto> {
    const budgets = await this.budgets.figures(tenantId);
    if (!budgets) throw tenantNotFound(tenantId);
    // Calls in progress, unread answers and the audit's text today are counted by each instance: this one's.
    // Storage is measured where the cached figure is only an upper bound (after a command or a delete, which count the whole file system's
    // growth meanwhile, other processes' writes included): the tenant reads what its workspaces hold.
    const [counted, storage] = await Promise.all([this.budgets.usage(tenantId), this.storage.usage(tenantId, { fresh: true })]);
    return {
      tenantId,
      budgets,
      usage: {
        ...counted,
        ...this.instance.of(tenantId),
        storageBytes: storage.bytes,
        storageInodes: storage.inodes,
      },
    };
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
    const figures = this.budgets.merge(next);
    this.budgets.remember(tenantId, figures);
    return figures;
  }
}
