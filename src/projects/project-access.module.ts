import { Module } from '@nestjs/common';
import { ProjectAccess } from './project-access.js';
import { ProjectsRepository } from './projects.repository.js';

// Below workspace, tools, skills and audit (which ask it), unlike ProjectsModule, which sits above them.
@Module({
  providers: [ProjectsRepository, ProjectAccess],
  exports: [ProjectsRepository, ProjectAccess],
})
export class ProjectAccessModule {}
