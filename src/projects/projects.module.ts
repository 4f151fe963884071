import { Module } from '@nestjs/common';
import { SkillsModule } from '../skills/skills.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { ProjectsController } from './projects.controller.js';
import { ProjectsRepository } from './projects.repository.js';
import { ProjectsService } from './projects.service.js';

@Module({
  imports: [WorkspaceModule, SkillsModule],
  controllers: [ProjectsController],
  providers: [ProjectsRepository, ProjectsService],
  exports: [ProjectsService],
})
export class ProjectsModule {}
