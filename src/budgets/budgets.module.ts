import { Global, Module } from '@nestjs/common';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { BudgetsRepository } from './budgets.repository.js';
import { BudgetsService } from './budgets.service.js';
import { CallAdmission } from './call-admission.js';
import { CommandAdmission } from './command-admission.js';
import { TenantUsageMetrics } from './tenant-usage-metrics.js';
import { TenantBudgets } from './tenant-budgets.js';
import { UnreadAnswers, UnreadAnswersGuard } from './unread-answers.js';
import { AUDIT_TEXT_ALLOWANCE } from '../audit/audit-text-allowance.js';
import { AuditAllowance } from './audit-allowance.js';
import { InstanceUsage } from './instance-usage.js';
import { StoredAnswers } from './stored-answers.js';
import { AdminUsageController, UsageController } from './usage.controller.js';

// Global: projects, calls, commands (built-in and skills), stored answers and the tenants' admin routes all
// check or show the one tenant's budgets.
@Global()
@Module({
  // Usage shows the tenant's storage, measured by the workspaces.
  imports: [WorkspaceModule],
  controllers: [UsageController, AdminUsageController],
  providers: [
    BudgetsRepository,
    TenantBudgets,
    BudgetsService,
    CommandAdmission,
    CallAdmission,
    UnreadAnswers,
    UnreadAnswersGuard,
    AuditAllowance,
    // The audit asks how much text a tenant's rows may keep; the figure is a budget.
    { provide: AUDIT_TEXT_ALLOWANCE, useExisting: AuditAllowance },
    InstanceUsage,
    TenantUsageMetrics,
    StoredAnswers,
  ],
  exports: [
    TenantBudgets,
    BudgetsService,
    CommandAdmission,
    CallAdmission,
    BudgetsRepository,
    UnreadAnswers,
    UnreadAnswersGuard,
    AUDIT_TEXT_ALLOWANCE,
    StoredAnswers,
  ],
})
export class BudgetsModule {}
