import { Controller, Get, Param, Query, Sse, UseInterceptors } from '@nestjs/common';
import { ApiHeader, ApiNotFoundResponse, ApiOkResponse, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Observable } from 'rxjs';
import { CurrentTenant, TenantAuth, type Tenant } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { type SerializedJson, SerializedJsonInterceptor } from '../common/http/serialized-json.interceptor.js';
import { ToolDto, ToolFormatQueryDto, ToolListResponseDto } from './dto/tool.dto.js';
import type { ServerSentEvent } from './events/tool-events.js';
import { ToolsService } from './tools.service.js';
import { ToolEventsService } from './events/tool-events.service.js';

@ApiTags('tools')
@TenantAuth()
@Controller('v1/projects/:projectId')
@ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found, or tool_not_found with details.suggestions' })
export class ToolsController {
  constructor(
    private readonly tools: ToolsService,
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

  @Sse('events')
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: 'Server-sent events: tool.started, tool.completed, tool.error, tool.pending, tool.denied (data: invocationId, tool, status, error)' })
  stream(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string): Promise<Observable<ServerSentEvent>> {
    return this.events.stream(tenant.tenantId, projectId);
  }
}
