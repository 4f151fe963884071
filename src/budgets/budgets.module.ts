import { Global, Module } from '@nestjs/common';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { BudgetsRepository } from './budgets.repository.js';
import { BudgetsService } from './budgets.service.js';
import { CallAdmission } from './call-admission.js';
import { CommandAdmission } from './command-admission.js';
import { TenantUsageMetrics } from './tenant-usage-metrics.js';
import { TenantBudgets } from './tenant-budgets.js';
import { AdminUsageController, UsageController } from './usage.controller.js';

// Global: projects, calls, commands (built-in and skills), stored answers and the tenants' admin routes all
// check or show the one tenant's budgets.
@Global()
@Module({
  // Usage shows the tenant's storage, measured by the workspaces.
  imports: [WorkspaceModule],
  controllers: [UsageController, AdminUsageController],
  providers: [BudgetsRepository, TenantBudgets, BudgetsService, CommandAdmission, CallAdmission, TenantUsageMetrics],
  exports: [TenantBudgets, BudgetsService, CommandAdmission, CallAdmission, BudgetsRepository],
})
export class BudgetsModule {}
