import { Module } from '@nestjs/common';
import { ApprovalRoutesModule } from '../approval-routes/approval-routes.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { ApprovalsController } from './approvals.controller.js';
import { ApprovalsService } from './approvals.service.js';
import { IdempotencyRepository } from './idempotency.repository.js';
import { IdempotencyService } from './idempotency.service.js';
import { IdempotentCalls } from './idempotent-calls.js';

// Call control on top of the one call path: calls under an Idempotency-Key (whichever route brought them:
// invoke, batch, MCP tools/call), and the approval of parked calls.
@Module({
  imports: [ToolsModule, AuditModule, ApprovalRoutesModule],
  controllers: [ApprovalsController],
  providers: [ApprovalsService, IdempotencyRepository, IdempotencyService, IdempotentCalls],
  // MCP tools/call takes Idempotency-Keys too; MCP tasks/cancel withdraws a parked call.
  exports: [IdempotentCalls, ApprovalsService],
})
export class CallsModule {}
