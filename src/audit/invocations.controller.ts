import { Controller, Get, Header, Param, Query, StreamableFile } from '@nestjs/common';
import {
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiTags,
  ApiTooManyRequestsResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import { AllowRoles, CurrentTenant, ProjectScoped, type Tenant, TenantAuth } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { INVOCATION_ID, PROJECT_ID } from '../common/http/api-params.js';
import {
  ExportInvocationsQueryDto,
  InvocationListResponseDto,
  InvocationResponseDto,
  ListInvocationsQueryDto,
} from './dto/invocation.dto.js';
import { InvocationsExportService } from './invocations-export.service.js';
import { InvocationsService } from './invocations.service.js';

@ApiTags('invocations')
@TenantAuth()
@Controller('v1/projects/:projectId/invocations')
@ProjectScoped('projectId')
@ApiParam(PROJECT_ID)
@ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found or invocation_not_found' })
export class InvocationsController {
  constructor(
    private readonly invocations: InvocationsService,
    private readonly exports: InvocationsExportService,
  ) {}

  @Get()
  @AllowRoles('agent', 'approver')
  @ApiOperation({ operationId: 'listInvocations', summary: "Page through the project's audit log" })
  @ApiOkResponse({ type: InvocationListResponseDto, description: 'Oldest first; filter by tool, status and the calling key' })
  list(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Query() query: ListInvocationsQueryDto,
  ): Promise<InvocationListResponseDto> {
    return this.invocations.list(tenant.tenantId, projectId, query, tenant.role, tenant.tools);
  }

  // Declared before ':invocationId', which would otherwise take 'export' for an id.
  @Get('export')
  @ApiOperation({ operationId: 'exportInvocations', summary: 'Export the audit log as NDJSON, resumable by cursor' })
  @Header('Cache-Control', 'no-store')
  @ApiProduces('application/x-ndjson')
  @ApiOkResponse({ schema: { type: 'string' }, description: "One invocation per line (the listing's fields plus `cursor`), oldest first" })
  // The refusal is JSON, not NDJSON (@ApiProduces would say so of a response given only a type).
  @ApiTooManyRequestsResponse({
    description:
      'too_many_exports: the tenant already has AUDIT_EXPORTS_PER_TENANT exports in progress on this instance (Retry-After); rate_limited',
    content: { 'application/json': { schema: { $ref: getSchemaPath(ErrorResponseDto) } } },
  })
  async export(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Query() query: ExportInvocationsQueryDto,
  ): Promise<StreamableFile> {
    return new StreamableFile(await this.exports.open(tenant.tenantId, projectId, query), { type: 'application/x-ndjson' });
  }

  @Get(':invocationId')
  @AllowRoles('agent', 'approver')
  @ApiOperation({ operationId: 'getInvocation', summary: 'Get one invocation, with its approval and outcome when it was parked' })
  @ApiParam(INVOCATION_ID)
  @ApiOkResponse({ type: InvocationResponseDto })
  get(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Param('invocationId') invocationId: string,
  ): Promise<InvocationResponseDto> {
    return this.invocations.get(tenant.tenantId, projectId, invocationId, tenant.role, tenant.tools);
  }
}
