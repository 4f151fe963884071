import { Module } from '@nestjs/common';
import { CallsModule } from '../calls/calls.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { McpController } from './mcp.controller.js';
import { McpEndpointService } from './mcp-endpoint.service.js';
import { McpCancellations } from './mcp-cancellations.js';
import { McpWorkspaceResources } from './mcp-workspace-resources.js';
import { McpTasks } from './mcp-tasks.service.js';
import { McpTasksRepository } from './mcp-tasks.repository.js';

// Every project as an MCP server (mcp.controller.ts); federation of upstream MCP servers lives in skills/.
@Module({
  imports: [ToolsModule, RateLimitModule, CallsModule, WorkspaceModule],
  controllers: [McpController],
  providers: [McpEndpointService, McpCancellations, McpWorkspaceResources, McpTasks, McpTasksRepository],
  // A toolset's MCP endpoint is this one with the toolset's catalogue (src/toolsets).
  exports: [McpEndpointService],
})
export class McpModule {}
