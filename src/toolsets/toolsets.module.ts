import { Module } from '@nestjs/common';
import { McpModule } from '../mcp/mcp.module.js';
import { ProjectAccessModule } from '../projects/project-access.module.js';
import { SkillsModule } from '../skills/skills.module.js';
import { TenantsModule } from '../tenants/tenants.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { ToolRoutesModule } from '../tools/routes/tool-routes.module.js';
import { ToolsetCatalogues } from './toolset-catalogues.js';
import { ToolsetServingController } from './toolset-serving.controller.js';
import { ToolsetServingService } from './toolset-serving.service.js';
import { ToolsetsController } from './toolsets.controller.js';
import { ToolsetsRepository } from './toolsets.repository.js';
import { ToolsetsService } from './toolsets.service.js';

// Curated toolsets of a project (toolsets.controller.ts) and their serving to agents (toolset-serving.*):
// a catalogue handed to the one call path and the MCP endpoint, which serve it without knowing what made it.
@Module({
  imports: [ProjectAccessModule, SkillsModule, ToolsModule, ToolRoutesModule, McpModule, TenantsModule],
  controllers: [ToolsetsController, ToolsetServingController],
  providers: [ToolsetsRepository, ToolsetsService, ToolsetCatalogues, ToolsetServingService],
  exports: [ToolsetsRepository],
})
export class ToolsetsModule {}
