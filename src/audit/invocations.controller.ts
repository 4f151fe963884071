import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CurrentTenant, TenantAuth, type Tenant } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { InvocationListResponseDto, InvocationResponseDto, ListInvocationsQueryDto } from './dto/invocation.dto.js';
import { InvocationsService } from './invocations.service.js';

@ApiTags('invocations')
@TenantAuth()
@Controller('v1/projects/:projectId/invocations')
@ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found or invocation_not_found' })
export class InvocationsController {
  constructor(private readonly invocations: InvocationsService) {}

  @Get()
  @ApiOkResponse({ type: InvocationListResponseDto, description: 'Oldest first; filter by tool and status' })
  list(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Query() query: ListInvocationsQueryDto,
  ): Promise<InvocationListResponseDto> {
    return this.invocations.list(tenant.tenantId, projectId, query);
  }

  @Get(':invocationId')
  @ApiOkResponse({ type: InvocationResponseDto })
  get(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Param('invocationId') invocationId: string,
  ): Promise<InvocationResponseDto> {
    return this.invocations.get(tenant.tenantId, projectId, invocationId);
  }
}
