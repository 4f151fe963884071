import { Module } from '@nestjs/common';
import { WorkspaceBrowserService } from './workspace-browser.service.js';
import { WorkspaceController } from './workspace.controller.js';
import { WorkspaceRepository } from './workspace.repository.js';
import { WorkspaceResolver } from './workspace-resolver.js';
import { StaleTempSweeper } from './stale-temp-sweeper.js';
import { WorkspaceReadThreads } from './read-threads/workspace-read-threads.js';

@Module({
  controllers: [WorkspaceController],
  providers: [WorkspaceRepository, WorkspaceResolver, StaleTempSweeper, WorkspaceBrowserService, WorkspaceReadThreads],
  exports: [WorkspaceResolver, WorkspaceReadThreads],
})
export class WorkspaceModule {}
