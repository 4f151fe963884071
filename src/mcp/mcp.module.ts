import { Module } from '@nestjs/common';
import { CallsModule } from '../calls/calls.module.js';
import { ConnectionsModule } from '../connections/connections.module.js';
import { SkillsModule } from '../skills/skills.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { McpController } from './mcp.controller.js';
import { McpEndpointService } from './mcp-endpoint.service.js';
import { McpKeySessions } from './mcp-key-sessions.js';
import { McpSdkFallback } from './mcp-sdk-fallback.js';
import { McpToolCalls } from './mcp-tool-calls.js';
import { McpCancellations } from './mcp-cancellations.js';
import { McpWorkspaceResources } from './mcp-workspace-resources.js';
import { McpFederation } from './mcp-federation.js';
import { FederatedUpstreams } from './federated-upstreams.js';
import { McpOfferings } from './mcp-offerings.js';
import { McpTasks } from './mcp-tasks.service.js';
import { McpTasksRepository } from './mcp-tasks.repository.js';
import { McpClientCapabilities } from './mcp-client-capabilities.js';
import { McpClientCapabilitiesRepository } from './mcp-client-capabilities.repository.js';
import { McpLogLevels } from './mcp-log-levels.js';
import { McpLogLevelsRepository } from './mcp-log-levels.repository.js';
import { McpInputRounds } from './input-required/input-rounds.js';

// Every project as an MCP server (mcp.controller.ts); its MCP sources' tools are skills (skills/), their
// resources and prompts are relayed here (mcp-federation.ts).
@Module({
  imports: [ToolsModule, SkillsModule, RateLimitModule, CallsModule, WorkspaceModule, ConnectionsModule],
  controllers: [McpController],
  providers: [
    McpEndpointService,
    McpToolCalls,
    McpSdkFallback,
    McpKeySessions,
    McpCancellations,
    McpWorkspaceResources,
    McpFederation,
    FederatedUpstreams,
    McpOfferings,
    McpTasks,
    McpTasksRepository,
    McpLogLevels,
    McpLogLevelsRepository,
    McpClientCapabilities,
    McpClientCapabilitiesRepository,
    McpInputRounds,
  ],
  // A toolset's MCP endpoint is this one with the toolset's catalogue (src/toolsets).
  exports: [McpEndpointService],
})
export class McpModule {}
