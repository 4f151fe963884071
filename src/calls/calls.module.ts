import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { ApprovalsController } from './approvals.controller.js';
import { ApprovalsService } from './approvals.service.js';
import { CallsController } from './calls.controller.js';
import { IdempotencyRepository } from './idempotency.repository.js';
import { IdempotencyService } from './idempotency.service.js';
import { KeyedCallService } from './keyed-call.service.js';
import { ToolBatchService } from './tool-batch.service.js';
import { ToolInvokeService } from './tool-invoke.service.js';

// Call control on top of the one call path: invoke with idempotency keys, batches, approval of calls.
@Module({
  imports: [ToolsModule, AuditModule, RateLimitModule],
  controllers: [CallsController, ApprovalsController],
  providers: [ApprovalsService, IdempotencyRepository, IdempotencyService, KeyedCallService, ToolInvokeService, ToolBatchService],
  // MCP tools/call takes Idempotency-Keys too; MCP tasks/cancel withdraws a parked call.
  exports: [KeyedCallService, ToolInvokeService, ApprovalsService],
})
export class CallsModule {}
