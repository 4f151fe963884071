import { Controller, Delete, Get, Headers, Param, Post, Query, Res, UseGuards, UseInterceptors } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBody,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { AllowRoles, CurrentTenant, ProjectScoped, type Tenant, TenantAuth, ToolsetRoute } from '../common/auth/auth.decorators.js';
import { OAuthProtectedResource } from '../common/auth/oauth-resource.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { EXPOSED_TOOL_NAME, PROJECT_ID, TOOLSET_SLUG } from '../common/http/api-params.js';
import { ClientAbortController } from '../common/http/client-abort-controller.decorator.js';
import { type HttpExchange, RawHttpExchange } from '../common/http/http-exchange.decorator.js';
import { type SerializedJson, SerializedJsonInterceptor } from '../common/http/serialized-json.interceptor.js';
import { type ExpressLikeResponse, type FastifyLikeReply, jsonReply } from '../tools/routes/json-reply.js';
import { McpOriginGuard } from '../mcp/mcp-origin.guard.js';
import { InvocationResultDto, InvokeToolBodyDto, PendingApprovalDto, ToolFormatQueryDto, TOOL_LIST_SCHEMA } from '../tools/dto/tool.dto.js';
import { type RawToolCall, RestToolCall } from '../tools/tool-call.gate.js';
import { ToolsetServingService } from './toolset-serving.service.js';
import { callCost, LoopShare } from '../common/scheduling/loop-share.js';
import { refusalAnswer } from '../common/errors/error-answer.js';

// A toolset served to agents: its tools in every format, a call by the name the model saw, and MCP. A key
// bound to the toolset (`toolset` on the key) may use these routes of it and nothing else.
@ApiTags('toolsets')
@TenantAuth()
@ToolsetRoute('slug')
@Controller('v1/projects/:projectId/toolsets/:slug')
@ProjectScoped('projectId')
@ApiParam(PROJECT_ID)
@ApiParam(TOOLSET_SLUG)
@ApiNotFoundResponse({
  type: ErrorResponseDto,
  description: 'project_not_found, toolset_not_found, or tool_not_found with details.suggestions',
})
export class ToolsetServingController {
  constructor(
    private readonly serving: ToolsetServingService,
    private readonly share: LoopShare,
  ) {}

  @Get('tools')
  @AllowRoles('agent', 'approver')
  @ApiOperation({
    operationId: 'listToolsetTools',
    summary: "List a toolset's tools as the model sees them, in the asked format (search mode: search_tools and call_tool)",
  })
  @UseInterceptors(SerializedJsonInterceptor)
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'The ETag of a listing already held: 304 while it is current' })
  @ApiOkResponse({
    schema: TOOL_LIST_SCHEMA,
    headers: { ETag: { description: 'Changes whenever the listing does', schema: { type: 'string' } } },
  })
  @ApiResponse({ status: 304, description: 'Not modified: If-None-Match names the current ETag; no body' })
  list(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Param('slug') slug: string,
    @Query() query: ToolFormatQueryDto,
  ): Promise<SerializedJson> {
    // In the tenant's share of the event loop, as the project's listing is (ToolsController.list).
    return this.share.run(
      tenant.tenantId,
      () => this.serving.list(tenant, projectId, slug, query.format, query.strict),
      (listing) => callCost(listing?.bytes.length ?? 0),
    );
  }

  @Post('tools/:toolName/invoke')
  @AllowRoles('agent')
  @ApiParam(EXPOSED_TOOL_NAME)
  @ApiOperation({
    operationId: 'invokeToolsetTool',
    summary: 'Call a tool of the toolset by the name the model saw (as POST …/tools/{toolName}/invoke)',
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: '1-255 visible ASCII characters, as on POST …/tools/{toolName}/invoke',
  })
  @ApiBody({ type: InvokeToolBodyDto })
  @ApiOkResponse({ type: InvocationResultDto, description: 'The tool ran: status ok, error or timeout' })
  @ApiAcceptedResponse({
    type: PendingApprovalDto,
    description: 'The project requires approval of the real tool: the call is parked, not run',
  })
  @ApiResponse({ status: 400, type: ErrorResponseDto, description: 'invalid_body, invalid_path, invalid_timeout, invalid_idempotency_key' })
  @ApiUnprocessableEntityResponse({
    type: ErrorResponseDto,
    description: 'invalid_arguments, naming the tool and parameters as the toolset shows them',
  })
  async invoke(
    @RestToolCall() call: RawToolCall,
    @Param('slug') slug: string,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @ClientAbortController() controller: AbortController,
    @Res() response: ExpressLikeResponse | FastifyLikeReply,
  ): Promise<void> {
    const answer = await this.serving.invoke(call, slug, idempotencyKey, controller).catch(refusalAnswer);
    jsonReply(response).send(answer.status, answer.headers, answer.body);
  }

  @Post('mcp')
  @OAuthProtectedResource()
  @AllowRoles('agent')
  @UseGuards(McpOriginGuard)
  @ApiOperation({
    operationId: 'toolsetMcpMessage',
    summary: 'The toolset as an MCP server (Streamable HTTP, stateless), as POST /v1/projects/{projectId}/mcp with the toolset’s tools',
  })
  @ApiBody({
    schema: {
      type: 'object',
      additionalProperties: true,
      description: 'A JSON-RPC message',
      examples: [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }],
    },
  })
  @ApiOkResponse({ schema: { type: 'object', additionalProperties: true }, description: 'The JSON-RPC response' })
  @ApiResponse({ status: 202, description: 'A notification or response was accepted; no body' })
  @ApiResponse({
    status: 400,
    schema: { type: 'object', additionalProperties: true },
    description: 'JSON-RPC error: not a JSON-RPC message',
  })
  @ApiResponse({ status: 403, type: ErrorResponseDto, description: 'host_not_allowed, origin_not_allowed; forbidden_for_role' })
  @ApiResponse({
    status: 406,
    schema: { type: 'object', additionalProperties: true },
    description: 'JSON-RPC error: the Accept header must list application/json and text/event-stream',
  })
  @ApiResponse({
    status: 415,
    schema: { type: 'object', additionalProperties: true },
    description: 'JSON-RPC error: the body must be application/json',
  })
  mcp(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Param('slug') slug: string,
    @RawHttpExchange() exchange: HttpExchange,
    @ClientAbortController() controller: AbortController,
    @Res() _reply: unknown,
  ): Promise<void> {
    return this.serving.mcpMessage(tenant, projectId, slug, exchange, controller);
  }

  @Get('mcp')
  @OAuthProtectedResource()
  @AllowRoles('agent')
  @UseGuards(McpOriginGuard)
  @ApiOperation({ operationId: 'toolsetMcpOpenStream', summary: 'Refused (405): a stateless MCP endpoint has no server-initiated stream' })
  @ApiResponse({ status: 405, type: ErrorResponseDto, description: 'method_not_allowed: the endpoint only takes POST' })
  mcpGet(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string, @Param('slug') slug: string): Promise<never> {
    return this.serving.refuseMcpMethod(tenant, projectId, slug);
  }

  @Delete('mcp')
  @OAuthProtectedResource()
  @AllowRoles('agent')
  @UseGuards(McpOriginGuard)
  @ApiOperation({ operationId: 'toolsetMcpEndSession', summary: 'Refused (405): a stateless MCP endpoint has no session to end' })
  @ApiResponse({ status: 405, type: ErrorResponseDto, description: 'method_not_allowed: there is no session to end' })
  mcpDelete(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string, @Param('slug') slug: string): Promise<never> {
    return this.serving.refuseMcpMethod(tenant, projectId, slug);
  }
}
