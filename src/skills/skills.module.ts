import { Module } from '@nestjs/common';
import { ProjectAccessModule } from '../projects/project-access.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { ConnectionsModule } from '../connections/connections.module.js';
import { ProjectSkillsController } from './project-skills.controller.js';
import { SkillCompiler } from './skill-compiler.js';
import { SkillSecretsResealer } from './skill-secrets.resealer.js';
import { SkillTools } from './skill-tools.js';
import { SkillsController } from './skills.controller.js';
import { SkillsRepository } from './skills.repository.js';
import { SkillsService } from './skills.service.js';
import { McpSkillImporter } from './mcp/mcp-skill-importer.js';
import { UpstreamMcpClients } from './mcp/upstream-mcp-clients.js';
import { ModernUpstreams } from './mcp/modern-upstream.js';
import { SkillChangesRepository } from './definitions/skill-changes.repository.js';
import { ToolNameClaims } from './tool-name-claims.js';

@Module({
  imports: [ProjectAccessModule, WorkspaceModule, ConnectionsModule],
  controllers: [SkillsController, ProjectSkillsController],
  providers: [
    SkillsRepository,
    SkillChangesRepository,
    SkillCompiler,
    SkillTools,
    SkillsService,
    SkillSecretsResealer,
    UpstreamMcpClients,
    ModernUpstreams,
    McpSkillImporter,
    ToolNameClaims,
  ],
  exports: [
    SkillTools,
    SkillsRepository,
    SkillChangesRepository,
    SkillCompiler,
    UpstreamMcpClients,
    ModernUpstreams,
    McpSkillImporter,
    ToolNameClaims,
  ],
})
export class SkillsModule {}
