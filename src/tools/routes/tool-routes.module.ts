import { Module } from '@nestjs/common';
import { AuditModule } from '../../audit/audit.module.js';
import { CallsModule } from '../../calls/calls.module.js';
import { RateLimitModule } from '../../rate-limit/rate-limit.module.js';
import { ToolsModule } from '../tools.module.js';
import { BatchRouteService } from './batch-route.service.js';
import { InvokeRouteService } from './invoke-route.service.js';
import { ToolCallsController } from './tool-calls.controller.js';
import { ToolsController } from './tools.controller.js';
import { ToolsService } from './tools.service.js';

// The routes of /v1/projects/:projectId/tools (and the project's event stream): the listing, one tool,
// invoke and batch. They sit above call control (CallsModule: idempotency keys, approvals) and the call
// path it wraps (ToolsModule).
@Module({
  imports: [ToolsModule, CallsModule, AuditModule, RateLimitModule],
  // invoke and batch first: Express tries routes in the order they were registered, and these are the ones
  // agents call most (app.module.ts registers this module first for the same reason).
  controllers: [ToolCallsController, ToolsController],
  // FairTurns, which BatchRouteService takes its turns from, is the one SchedulingModule shares.
  providers: [ToolsService, InvokeRouteService, BatchRouteService],
  // A toolset's invoke route is this one with the toolset's catalogue (src/toolsets).
  exports: [InvokeRouteService],
})
export class ToolRoutesModule {}
