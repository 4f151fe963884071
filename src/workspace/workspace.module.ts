import { Module } from '@nestjs/common';
import { WorkspaceBrowserService } from './workspace-browser.service.js';
import { WorkspaceController } from './workspace.controller.js';
import { WorkspaceRepository } from './workspace.repository.js';
import { WorkspaceResolver } from './workspace-resolver.js';

@Module({
  controllers: [WorkspaceController],
  providers: [WorkspaceRepository, WorkspaceResolver, WorkspaceBrowserService],
  exports: [WorkspaceResolver],
})
export class WorkspaceModule {}
