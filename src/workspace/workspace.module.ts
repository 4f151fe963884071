import { Module } from '@nestjs/common';
import { WorkspaceBrowserService } from './workspace-browser.service.js';
import { WorkspaceController } from './workspace.controller.js';
import { ProjectAccessModule } from '../projects/project-access.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { WorkspaceResolver } from './workspace-resolver.js';
import { StaleTempSweeper } from './stale-temp-sweeper.js';
import { WorkspacePlacement } from './placement/workspace-placement.js';
import { WorkspacePlacementRepository } from './placement/workspace-placement.repository.js';
import { WorkspaceReadThreads } from './read-threads/workspace-read-threads.js';
import { WorkspaceQuota } from './workspace-quota.js';
import { TenantStorage } from './tenant-storage.js';

@Module({
  imports: [ProjectAccessModule, AuditModule],
  controllers: [WorkspaceController],
  providers: [
    WorkspaceResolver,
    StaleTempSweeper,
    WorkspaceBrowserService,
    WorkspaceReadThreads,
    WorkspacePlacement,
    WorkspacePlacementRepository,
    WorkspaceQuota,
    TenantStorage,
  ],
  exports: [WorkspaceResolver, WorkspaceReadThreads, WorkspacePlacement, WorkspaceQuota, TenantStorage],
})
export class WorkspaceModule {}
