import { Controller, Delete, Get, Param, Post, Res, UseGuards } from '@nestjs/common';
import {
  ApiBody,
  type ApiResponseSchemaHost,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import { AllowRoles, CurrentTenant, ProjectScoped, type Tenant, TenantAuth } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { PROJECT_ID } from '../common/http/api-params.js';
import { ClientAbortController } from '../common/http/client-abort-controller.decorator.js';
import { OAuthProtectedResource } from '../common/auth/oauth-resource.js';
import { type HttpExchange, RawHttpExchange } from '../common/http/http-exchange.decorator.js';
import { McpEndpointService } from './mcp-endpoint.service.js';
import { McpOriginGuard } from './mcp-origin.guard.js';

// JSON-RPC 2.0 as the MCP SDK's transport reads and writes it; the messages themselves are MCP's. Written
// in JSON Schema 2020-12 (`const`, type lists), which the 3.0-typed SchemaObject of @nestjs/swagger lacks.
type Schema = ApiResponseSchemaHost['schema'];
const JSON_RPC_ERROR = {
  type: 'object',
  properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
  required: ['code', 'message'],
};
const JSON_RPC_MESSAGE = {
  type: 'object',
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'integer', 'null'] },
    method: { type: 'string' },
    params: { type: 'object', additionalProperties: true },
    result: { type: 'object', additionalProperties: true },
    error: JSON_RPC_ERROR,
  },
  required: ['jsonrpc'],
};
const JSON_RPC_MESSAGES = { anyOf: [JSON_RPC_MESSAGE, { type: 'array', items: JSON_RPC_MESSAGE }] } as unknown as Schema;
// What the transport answers when it refuses a request: a JSON-RPC error with no id.
const JSON_RPC_REFUSAL = {
  type: 'object',
  properties: { jsonrpc: { const: '2.0' }, error: JSON_RPC_ERROR, id: { type: 'null' } },
  required: ['jsonrpc', 'error'],
} as unknown as Schema;

@ApiTags('mcp')
@TenantAuth()
// Where an OAuth access token is accepted (for its own project; toolsets' MCP routes are the others); a 401 names the resource metadata.
@OAuthProtectedResource()
@Controller('v1/projects/:projectId/mcp')
@ProjectScoped('projectId')
@ApiParam(PROJECT_ID)
@ApiResponse({
  status: 404,
  type: ErrorResponseDto,
  description:
    'project_not_found (also for another tenant’s project); on POST under revision 2026-07-28, also the JSON-RPC error -32601 for a method the revision removed or the server does not serve',
})
@UseGuards(McpOriginGuard)
@ApiForbiddenResponse({
  type: ErrorResponseDto,
  description:
    'host_not_allowed: the Host is not one of the service’s names (ALLOWED_HOSTS); origin_not_allowed: a browser Origin other than the service’s own or MCP_ALLOWED_ORIGINS. Nothing ran.',
})
export class McpController {
  constructor(private readonly endpoint: McpEndpointService) {}

  @Post()
  @AllowRoles('agent')
  @ApiOperation({
    operationId: 'mcpMessage',
    summary: 'The project as an MCP server (Streamable HTTP transport, stateless)',
    description:
      'JSON-RPC 2.0 messages of the Model Context Protocol: initialize, tools/list (the project’s tools, as GET .../tools?format=mcp), ' +
      'tools/call (the same path as POST .../invoke: rate limits, argument validation, workspace confinement, timeouts, audit with channel "mcp"). ' +
      'Where the key may call read_file: resources/list, resources/read and resources/templates/list (the workspace files as file:///{path}; a read is a read_file call, confined and audited alike) and completion/complete of the template’s path. ' +
      'Where the key may call a tool of an MCP source: that server’s resources, resource templates, prompts (prompts/list, prompts/get) and completions, relayed under their own URIs and names (one source per name; a read or prompt is audited). ' +
      'Send `Accept: application/json, text/event-stream`; answers are application/json, except a tools/call with `_meta.progressToken`, ' +
      'answered as text/event-stream (progress notifications, then the response). Protocol revisions 2024-11-05 to 2025-11-25 (initialize) ' +
      'and 2026-07-28 (no initialize: server/discover; every request carries params._meta with io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities, else 400 with -32602; the Mcp-Method and Mcp-Name headers must match the body, else 400 with -32020 and nothing runs; a method the revision removed, such as initialize or ping, or an unknown one is 404 with -32601). ' +
      'Refused arguments come back as a tool result with isError: true and the same message as the REST 422; an unknown tool is the JSON-RPC error -32602. ' +
      'notifications/cancelled stops the named tools/call of the same key, on whichever instance it runs. ' +
      'A call parked for approval comes back as a task where the client asks for one (2025-11-25: params.task, then tasks/get, tasks/result, tasks/list, tasks/cancel; ' +
      '2026-07-28: the io.modelcontextprotocol/tasks extension declared in _meta, then tasks/get, tasks/update, tasks/cancel); a task answers only to the key that made the call (-32602 to anyone else, as for an unknown id); tasks/cancel withdraws the waiting call.',
  })
  @ApiBody({
    schema: {
      ...JSON_RPC_MESSAGES,
      description: 'A JSON-RPC request or notification (or a batch of them)',
      examples: [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }],
    },
  })
  @ApiOkResponse({ schema: JSON_RPC_MESSAGES, description: 'The JSON-RPC response (or responses)' })
  @ApiResponse({ status: 202, description: 'A notification or response was accepted; no body' })
  @ApiResponse({
    status: 400,
    schema: JSON_RPC_REFUSAL,
    description:
      'JSON-RPC error: not a JSON-RPC message (a parse or invalid-request error); under 2026-07-28, -32602 (no _meta envelope), -32020 (Mcp-Method or Mcp-Name disagrees with the body), -32021 (a client capability the method needs was not declared) or -32022 (an unsupported revision, data { supported, requested })',
  })
  @ApiResponse({
    status: 406,
    schema: JSON_RPC_REFUSAL,
    description: 'JSON-RPC error: the Accept header must list application/json and text/event-stream',
  })
  @ApiResponse({ status: 415, schema: JSON_RPC_REFUSAL, description: 'JSON-RPC error: the body must be application/json' })
  post(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @RawHttpExchange() exchange: HttpExchange,
    @ClientAbortController() controller: AbortController,
    // The exchange answers; @Res tells Nest so. Without it Nest sends an empty reply after the handler,
    // which Fastify refuses by building an "already sent" error (a stack trace) on every call.
    @Res() _reply: unknown,
  ): Promise<void> {
    return this.endpoint.handle({ tenant, projectId, controller }, exchange);
  }

  // Stateless: no server-initiated stream to open and no session to end; the transport allows a 405.
  @Get()
  @AllowRoles('agent')
  @ApiOperation({ operationId: 'mcpOpenStream', summary: 'Refused (405): a stateless MCP endpoint has no server-initiated stream' })
  @ApiResponse({ status: 405, type: ErrorResponseDto, description: 'method_not_allowed: the endpoint only takes POST' })
  get(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string): Promise<never> {
    return this.endpoint.refuseMethod({ tenantId: tenant.tenantId, projectId });
  }

  @Delete()
  @AllowRoles('agent')
  @ApiOperation({ operationId: 'mcpEndSession', summary: 'Refused (405): a stateless MCP endpoint has no session to end' })
  @ApiResponse({ status: 405, type: ErrorResponseDto, description: 'method_not_allowed: there is no session to end' })
  delete(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string): Promise<never> {
    return this.endpoint.refuseMethod({ tenantId: tenant.tenantId, projectId });
  }
}
