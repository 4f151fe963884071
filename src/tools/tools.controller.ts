import { Controller, Get, HttpCode, Param, Post, Query, Sse, UseInterceptors } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiForbiddenResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiProduces,
  ApiResponse,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import type { Observable } from 'rxjs';
import { CurrentTenant, TenantAuth, type Tenant } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { ClientAbortController } from '../common/http/client-abort-controller.decorator.js';
import { type SerializedJson, SerializedJsonInterceptor } from '../common/http/serialized-json.interceptor.js';
import {
  InvalidArgumentsResponseDto,
  InvocationResultDto,
  InvokeToolBodyDto,
  ToolDto,
  ToolFormatQueryDto,
  ToolListResponseDto,
} from './dto/tool.dto.js';
import type { ServerSentEvent } from './events/tool-events.js';
import { type RawToolCall, RestToolCall } from './tool-call.gate.js';
import { ToolCallsService } from './tool-calls.service.js';
import { ToolsService } from './tools.service.js';
import { ToolEventsService } from './events/tool-events.service.js';

@ApiTags('tools')
@TenantAuth()
@Controller('v1/projects/:projectId')
@ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found, or tool_not_found with details.suggestions' })
export class ToolsController {
  constructor(
    private readonly tools: ToolsService,
    private readonly calls: ToolCallsService,
    private readonly events: ToolEventsService,
  ) {}

  @Get('tools')
  @UseInterceptors(SerializedJsonInterceptor)
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'The ETag of a listing already held: 304 while it is current' })
  @ApiOkResponse({
    type: ToolListResponseDto,
    headers: { ETag: { description: 'Changes whenever the listing does', schema: { type: 'string' } } },
  })
  @ApiResponse({ status: 304, description: 'Not modified: If-None-Match names the current ETag; no body' })
  list(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string, @Query() query: ToolFormatQueryDto): Promise<SerializedJson> {
    return this.tools.list(tenant.tenantId, projectId, query.format);
  }

  @Get('tools/:toolName')
  @ApiOkResponse({ type: ToolDto, description: 'One tool, in the asked format' })
  get(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Param('toolName') toolName: string,
    @Query() query: ToolFormatQueryDto,
  ) {
    return this.tools.get(tenant.tenantId, projectId, toolName, query.format);
  }

  @Post('tools/:toolName/invoke')
  @HttpCode(200)
  @ApiBody({ type: InvokeToolBodyDto })
  @ApiOkResponse({ type: InvocationResultDto, description: 'The tool ran: status ok, error or timeout' })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: 'invalid_body, invalid_path, invalid_timeout' })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: 'Refused before running: path_outside_workspace, url_blocked, command_not_allowed, shell_disabled, special_file, hard_link',
  })
  @ApiUnprocessableEntityResponse({ type: InvalidArgumentsResponseDto, description: 'invalid_arguments' })
  invoke(@RestToolCall() call: RawToolCall, @ClientAbortController() controller: AbortController): Promise<InvocationResultDto> {
    return this.calls.call(call, controller);
  }

  @Sse('events')
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: 'Server-sent events: tool.started, tool.completed, tool.error (data: invocationId, tool, status, error)' })
  stream(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string): Promise<Observable<ServerSentEvent>> {
    return this.events.stream(tenant.tenantId, projectId);
  }
}
