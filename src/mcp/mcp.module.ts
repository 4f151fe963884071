import { Module } from '@nestjs/common';
import { ToolsModule } from '../tools/tools.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { McpController } from './mcp.controller.js';
import { McpEndpointService } from './mcp-endpoint.service.js';

// Every project as an MCP server (mcp.controller.ts); federation of upstream MCP servers lives in skills/.
@Module({
  imports: [ToolsModule, RateLimitModule],
  controllers: [McpController],
  providers: [McpEndpointService],
})
export class McpModule {}
