import path from 'node:path';
import { Controller, Get, Param, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { AllowRoles, CurrentTenant, ProjectScoped, type Tenant, TenantAuth } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { PROJECT_ID } from '../common/http/api-params.js';
import { ListFilesQueryDto, ReadFileQueryDto, WorkspaceFileDto, WorkspaceListingDto } from './dto/workspace-files.dto.js';
import { WorkspaceResponseDto } from './dto/workspace.dto.js';
import { WorkspaceBrowserService } from './workspace-browser.service.js';
import { WorkspaceResolver } from './workspace-resolver.js';
import { isPathInside } from './fs/workspace-directory.js';
import { WorkspacePlacement } from './placement/workspace-placement.js';

@ApiTags('workspace')
@TenantAuth()
@Controller('v1/projects/:projectId/workspace')
@ProjectScoped('projectId')
@ApiParam(PROJECT_ID)
@ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found, or (files) not_found' })
@ApiConflictResponse({ type: ErrorResponseDto, description: 'workspace_unavailable (WORKSPACE_FALLBACK=error)' })
export class WorkspaceController {
  constructor(
    private readonly resolver: WorkspaceResolver,
    private readonly browser: WorkspaceBrowserService,
    private readonly placement: WorkspacePlacement,
  ) {}

  @Get()
  @AllowRoles('approver')
  @ApiOperation({
    operationId: 'getWorkspace',
    summary:
      "Where the project's tools run: where the workspace came from, and its path inside the tenant's granted roots (never a host path)",
  })
  @ApiOkResponse({ type: WorkspaceResponseDto })
  async resolve(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string): Promise<WorkspaceResponseDto> {
    const resolved = await this.resolver.resolve(tenant.tenantId, projectId);
    const roots = resolved.source === 'database' ? await this.placement.tenantRoots(tenant.tenantId) : [];
    const root = roots.find((r) => isPathInside(r, resolved.path));
    if (!root) return { path: null, workspaceRoot: null, source: resolved.source };
    return { path: path.posix.relative(root, resolved.path) || '.', workspaceRoot: root, source: resolved.source };
  }

  @Get('files')
  @AllowRoles('approver')
  @ApiOperation({ operationId: 'listWorkspaceFiles', summary: 'List a directory of the workspace' })
  @ApiOkResponse({ type: WorkspaceListingDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: 'invalid_path, not_a_directory' })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: 'path_outside_workspace, special_file; forbidden: the admin token was sent',
  })
  listFiles(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Query() query: ListFilesQueryDto,
  ): Promise<WorkspaceListingDto> {
    return this.browser.list(tenant, projectId, query.path, query.recursive);
  }

  @Get('file')
  @AllowRoles('approver')
  @ApiOperation({ operationId: 'readWorkspaceFile', summary: 'Read a file of the workspace' })
  @ApiOkResponse({ type: WorkspaceFileDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: 'invalid_path, is_directory' })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: 'path_outside_workspace, special_file; forbidden: the admin token was sent',
  })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: 'binary_file (ask with encoding=base64)' })
  readFile(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Query() query: ReadFileQueryDto,
  ): Promise<WorkspaceFileDto> {
    return this.browser.read(tenant, projectId, query.path, query.encoding);
  }
}
