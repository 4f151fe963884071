import { Body, Controller, Get, Param, Patch } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { AdminAuth } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { PROJECT_ID } from '../common/http/api-params.js';
import { AdminProjectResponseDto, AdminUpdateProjectDto } from './dto/project.dto.js';
import { ProjectsService } from './projects.service.js';

// The operator's view of any tenant's project, and the one place a workspace is put on a host path that
// no tenant was granted (see WorkspacePlacement).
@ApiTags('admin')
@AdminAuth()
@Controller('v1/admin/projects')
export class AdminProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  @Get(':projectId')
  @ApiOperation({ operationId: 'adminGetProject', summary: "Any tenant's project, with its workspace's absolute path on the host" })
  @ApiParam(PROJECT_ID)
  @ApiOkResponse({ type: AdminProjectResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found' })
  get(@Param('projectId') projectId: string): Promise<AdminProjectResponseDto> {
    return this.projects.getForOperator(projectId);
  }

  @Patch(':projectId')
  @ApiOperation({
    operationId: 'adminUpdateProject',
    summary: "Place a project's workspace directory on the host (or give it back its own)",
  })
  @ApiParam(PROJECT_ID)
  @ApiOkResponse({ type: AdminProjectResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found' })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: 'workspace_path_not_allowed' })
  update(@Param('projectId') projectId: string, @Body() dto: AdminUpdateProjectDto): Promise<AdminProjectResponseDto> {
    return this.projects.placeByOperator(projectId, dto.workspacePath);
  }
}
