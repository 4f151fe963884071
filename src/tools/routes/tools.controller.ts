import { Controller, Get, Headers, Param, Query, Sse, SseSignal, UseInterceptors } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Observable } from 'rxjs';
import { AllowRoles, CurrentTenant, ProjectScoped, type Tenant, TenantAuth } from '../../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../../common/errors/error-response.dto.js';
import { PROJECT_ID, TOOL_NAME } from '../../common/http/api-params.js';
import { type SerializedJson, SerializedJsonInterceptor } from '../../common/http/serialized-json.interceptor.js';
import { ANY_TOOL_SCHEMA, TOOL_LIST_MODELS, ToolFormatQueryDto, TOOL_LIST_SCHEMA } from '../dto/tool.dto.js';
import type { ServerSentEvent } from '../events/tool-events.js';
import { ToolsService } from './tools.service.js';
import { callCost, LoopShare } from '../../common/scheduling/loop-share.js';
import { ToolEventsService } from '../events/tool-events.service.js';

@ApiTags('tools')
@TenantAuth()
@Controller('v1/projects/:projectId')
@ProjectScoped('projectId')
@ApiParam(PROJECT_ID)
@ApiExtraModels(...TOOL_LIST_MODELS)
@ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found, or tool_not_found with details.suggestions' })
export class ToolsController {
  constructor(
    private readonly tools: ToolsService,
    private readonly events: ToolEventsService,
    private readonly share: LoopShare,
  ) {}

  @Get('tools')
  @AllowRoles('agent', 'approver')
  @ApiOperation({ operationId: 'listTools', summary: "List the project's tools (built-in and skill tools) in the asked format" })
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
    @Query() query: ToolFormatQueryDto,
  ): Promise<SerializedJson> {
    // Taken in the tenant's share of the event loop, as a call is: writing a listing of a few MB out costs it more than most calls.
    return this.share.run(
      tenant.tenantId,
      () => this.tools.list(tenant.tenantId, projectId, query.format, tenant.tools, query.strict),
      (listing) => callCost(listing?.bytes.length ?? 0),
    );
  }

  @Get('tools/:toolName')
  @AllowRoles('agent', 'approver')
  @ApiOperation({ operationId: 'getTool', summary: 'Get one tool in the asked format' })
  @ApiParam(TOOL_NAME)
  @ApiOkResponse({ schema: ANY_TOOL_SCHEMA, description: 'One tool, in the asked format' })
  get(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Param('toolName') toolName: string,
    @Query() query: ToolFormatQueryDto,
  ) {
    return this.tools.get(tenant.tenantId, projectId, toolName, query.format, tenant.tools, query.strict);
  }

  @Sse('events')
  @AllowRoles('agent', 'approver')
  @ApiOperation({ operationId: 'streamEvents', summary: "Follow the project's tool calls as server-sent events" })
  @ApiProduces('text/event-stream')
  @ApiHeader({
    name: 'last-event-id',
    required: false,
    description: 'Resume: the events of this project after that id, from a bounded buffer (the last 500 events), then the live ones',
  })
  @ApiOkResponse({
    schema: { type: 'string' },
    description:
      'Server-sent events of the calls run on any instance: tool.started, tool.completed, tool.error, tool.pending, tool.denied, tool.result (data: invocationId, tool, status, error, caller: {keyId, name} of the calling key; truncated: true when the error message or a name was cut, the audit row has it whole); tool.definition_changed when an MCP source answers a definition other than the reviewed one (data: tool, skillId, changeId, kind, incompatible, withheld, flags). Each event has an id for Last-Event-ID.',
  })
  // The refusal is JSON, not an event stream (@ApiProduces would say so of a response given only a type).
  @ApiTooManyRequestsResponse({
    description:
      'too_many_streams: the key or its tenant already holds SSE_MAX_STREAMS_PER_KEY / SSE_MAX_STREAMS_PER_TENANT open streams on this instance (Retry-After); rate_limited',
    content: { 'application/json': { schema: { $ref: getSchemaPath(ErrorResponseDto) } } },
  })
  stream(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @SseSignal() ended: AbortSignal,
    @Headers('last-event-id') lastEventId?: string,
  ): Promise<Observable<ServerSentEvent>> {
    return this.events.stream(tenant, projectId, lastEventId || undefined, ended);
  }
}
