import { Module } from '@nestjs/common';
import { ProjectAccessModule } from '../projects/project-access.module.js';
import { ApprovalDeliveryWorker } from './approval-delivery.worker.js';
import { ApprovalNotices } from './approval-notices.js';
import { ApprovalRoutesController } from './approval-routes.controller.js';
import { ApprovalRoutesRepository } from './approval-routes.repository.js';
import { ApprovalRoutesService } from './approval-routes.service.js';

// Where a project's parked calls are announced, and the worker that sends the announcements. Below the tools
// (the call parking queues approval.requested) and the calls (a decision queues approval.decided).
@Module({
  imports: [ProjectAccessModule],
  controllers: [ApprovalRoutesController],
  providers: [ApprovalRoutesRepository, ApprovalRoutesService, ApprovalDeliveryWorker, ApprovalNotices],
  exports: [ApprovalNotices],
})
export class ApprovalRoutesModule {}
