import { Controller, Get, Param } from '@nestjs/common';
import { ApiConflictResponse, ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CurrentTenant, TenantAuth, type Tenant } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { WorkspaceResponseDto } from './dto/workspace.dto.js';
import { WorkspaceResolver } from './workspace-resolver.js';

@ApiTags('workspace')
@TenantAuth()
@Controller('v1/projects/:projectId/workspace')
export class WorkspaceController {
  constructor(private readonly resolver: WorkspaceResolver) {}

  @Get()
  @ApiOkResponse({ type: WorkspaceResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found' })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'workspace_unavailable (WORKSPACE_FALLBACK=error)' })
  resolve(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string): Promise<WorkspaceResponseDto> {
    return this.resolver.resolve(tenant.tenantId, projectId);
  }
}
