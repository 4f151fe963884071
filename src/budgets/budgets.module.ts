import { Global, Module } from '@nestjs/common';
import { BudgetsRepository } from './budgets.repository.js';
import { BudgetsService } from './budgets.service.js';
import { CommandAdmission } from './command-admission.js';
import { TenantBudgets } from './tenant-budgets.js';
import { AdminUsageController, UsageController } from './usage.controller.js';

// Global: projects, commands (built-in and skills), stored answers and the tenants' admin routes all
// check or show the one tenant's budgets.
@Global()
@Module({
  controllers: [UsageController, AdminUsageController],
  providers: [BudgetsRepository, TenantBudgets, BudgetsService, CommandAdmission],
  exports: [TenantBudgets, BudgetsService, CommandAdmission, BudgetsRepository],
})
export class BudgetsModule {}
