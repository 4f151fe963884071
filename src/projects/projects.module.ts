import { Module } from '@nestjs/common';
import { SkillsModule } from '../skills/skills.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { ProjectsController } from './projects.controller.js';
import { AdminProjectsController } from './admin-projects.controller.js';
import { ProjectAccessModule } from './project-access.module.js';
import { ProjectsService } from './projects.service.js';

@Module({
  imports: [ProjectAccessModule, WorkspaceModule, SkillsModule],
  controllers: [ProjectsController, AdminProjectsController],
  providers: [ProjectsService],
  exports: [ProjectsService],
})
export class ProjectsModule {}
