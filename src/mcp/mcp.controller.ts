import { Controller, Delete, Get, Param, Post, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiResponse, ApiTags, ApiTooManyRequestsResponse } from '@nestjs/swagger';
import { CurrentTenant, TenantAuth, type Tenant } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { ClientAbortController } from '../common/http/client-abort-controller.decorator.js';
import { type HttpExchange, RawHttpExchange } from '../common/http/http-exchange.decorator.js';
import { McpEndpointService } from './mcp-endpoint.service.js';

@ApiTags('mcp')
@TenantAuth()
@Controller('v1/projects/:projectId/mcp')
@ApiResponse({ status: 404, type: ErrorResponseDto, description: 'project_not_found (also for another tenant’s project)' })
export class McpController {
  constructor(private readonly endpoint: McpEndpointService) {}

  @Post()
  @ApiOperation({
    summary: 'The project as an MCP server (Streamable HTTP transport, stateless)',
    description:
      'JSON-RPC 2.0 messages of the Model Context Protocol: initialize, tools/list (the project’s tools, as GET .../tools?format=mcp), ' +
      'tools/call (the same path as POST .../invoke: rate limits, argument validation, workspace confinement, timeouts, audit with channel "mcp"). ' +
      'Send `Accept: application/json, text/event-stream`; answers are application/json. Protocol revisions 2024-11-05 to 2025-11-25. ' +
      'Refused arguments come back as a tool result with isError: true and the same message as the REST 422.',
  })
  @ApiBody({ schema: { type: 'object', description: 'A JSON-RPC request or notification (or a batch of them)', example: { jsonrpc: '2.0', id: 1, method: 'tools/list' } } })
  @ApiOkResponse({ description: 'The JSON-RPC response' })
  @ApiResponse({ status: 202, description: 'A notification or response was accepted; no body' })
  @ApiResponse({ status: 406, description: 'JSON-RPC error: the Accept header must list application/json and text/event-stream' })
  @ApiTooManyRequestsResponse({ type: ErrorResponseDto, description: 'rate_limited, with Retry-After' })
  post(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @RawHttpExchange() exchange: HttpExchange,
    @ClientAbortController() controller: AbortController,
    // The exchange answers; @Res tells Nest so. Without it Nest sends an empty reply after the handler,
    // which Fastify refuses by building an "already sent" error (a stack trace) on every call.
    @Res() _reply: unknown,
  ): Promise<void> {
    return this.endpoint.handle({ tenantId: tenant.tenantId, projectId, controller }, exchange);
  }

  // Stateless: no server-initiated stream to open and no session to end; the transport allows a 405.
  @Get()
  @ApiResponse({ status: 405, type: ErrorResponseDto, description: 'method_not_allowed: the endpoint only takes POST' })
  get(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string): Promise<never> {
    return this.endpoint.refuseMethod({ tenantId: tenant.tenantId, projectId });
  }

  @Delete()
  @ApiResponse({ status: 405, type: ErrorResponseDto, description: 'method_not_allowed: there is no session to end' })
  delete(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string): Promise<never> {
    return this.endpoint.refuseMethod({ tenantId: tenant.tenantId, projectId });
  }
}
