import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { AllowRoles, CurrentTenant, ProjectScoped, type Tenant, TenantAuth } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { PageQueryDto } from '../common/pagination/cursor.js';
import { PROJECT_ID } from '../common/http/api-params.js';
import { CreateProjectDto, ProjectListResponseDto, ProjectResponseDto, UpdateProjectDto } from './dto/project.dto.js';
import { ProjectsService } from './projects.service.js';

@ApiTags('projects')
@TenantAuth()
@Controller('v1/projects')
export class ProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  @Post()
  @ApiOperation({ operationId: 'createProject', summary: 'Create a project' })
  @ApiCreatedResponse({ type: ProjectResponseDto })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'project_slug_taken' })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: 'workspace_path_operator_only: the tenant has no granted workspace roots; forbidden: the admin token was sent',
  })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: 'workspace_path_not_allowed' })
  async create(@CurrentTenant() tenant: Tenant, @Body() dto: CreateProjectDto): Promise<ProjectResponseDto> {
    return this.projects.create(tenant.tenantId, dto);
  }

  @Get()
  @AllowRoles('agent', 'approver')
  @ApiOperation({ operationId: 'listProjects', summary: 'List projects, oldest first' })
  @ApiOkResponse({ type: ProjectListResponseDto })
  list(@CurrentTenant() tenant: Tenant, @Query() query: PageQueryDto): Promise<ProjectListResponseDto> {
    return this.projects.list(tenant.tenantId, query.limit, query.cursor, tenant.projectIds);
  }

  @Get(':projectId')
  @ProjectScoped('projectId')
  @AllowRoles('agent', 'approver')
  @ApiOperation({ operationId: 'getProject', summary: 'Get a project' })
  @ApiParam(PROJECT_ID)
  @ApiOkResponse({ type: ProjectResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found' })
  async get(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string): Promise<ProjectResponseDto> {
    return this.projects.get(tenant.tenantId, projectId);
  }

  @Patch(':projectId')
  @ProjectScoped('projectId')
  @ApiOperation({ operationId: 'updateProject', summary: 'Change a project: name, slug, workspace, shell and approval settings' })
  @ApiParam(PROJECT_ID)
  @ApiOkResponse({ type: ProjectResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found' })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'project_slug_taken' })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: 'workspace_path_operator_only: the tenant has no granted workspace roots; forbidden: the admin token was sent',
  })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: 'workspace_path_not_allowed' })
  async update(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Body() dto: UpdateProjectDto,
  ): Promise<ProjectResponseDto> {
    return this.projects.update(tenant.tenantId, projectId, dto);
  }

  @Delete(':projectId')
  @ProjectScoped('projectId')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteProject', summary: 'Delete a project with its audit log' })
  @ApiParam(PROJECT_ID)
  @ApiNoContentResponse({ description: 'Deleted (the workspace directory on disk is left alone)' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found' })
  async remove(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string): Promise<void> {
    await this.projects.delete(tenant.tenantId, projectId);
  }
}
