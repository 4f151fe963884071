import { Module } from '@nestjs/common';
import { ProjectAccessModule } from '../projects/project-access.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { PoliciesController } from './policies.controller.js';
import { PoliciesService } from './policies.service.js';
import { PolicyEngineModule } from './policy-engine.module.js';

// The policy routes: set and read the tenant's and a project's Cedar policies, the schema, and the check.
@Module({
  imports: [PolicyEngineModule, ProjectAccessModule, ToolsModule, WorkspaceModule],
  controllers: [PoliciesController],
  providers: [PoliciesService],
})
export class PolicyModule {}
