import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentTenant, ProjectScoped, type Tenant, TenantAuth } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { PROJECT_ID, SKILL_ID } from '../common/http/api-params.js';
import { EnableSkillDto, ProjectSkillListResponseDto, ProjectSkillResponseDto } from './dto/skill.dto.js';
import { SkillsService } from './skills.service.js';

@ApiTags('skills')
@TenantAuth()
@Controller('v1/projects/:projectId/skills')
@ProjectScoped('projectId')
@ApiParam(PROJECT_ID)
@ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found, skill_not_found, skill_not_enabled' })
export class ProjectSkillsController {
  constructor(private readonly skills: SkillsService) {}

  @Post()
  @ApiOperation({ operationId: 'enableProjectSkill', summary: "Enable a skill on the project: its tools join the project's tools" })
  @ApiCreatedResponse({ type: ProjectSkillResponseDto })
  @ApiConflictResponse({
    type: ErrorResponseDto,
    description: 'tool_name_collision (details.collisions: each tool and what already provides it), skill_already_enabled',
  })
  async enable(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Body() dto: EnableSkillDto,
  ): Promise<ProjectSkillResponseDto> {
    return this.skills.enable(tenant.tenantId, projectId, dto.skillId);
  }

  @Get()
  @ApiOperation({ operationId: 'listProjectSkills', summary: 'List the skills enabled on the project' })
  @ApiOkResponse({ type: ProjectSkillListResponseDto })
  async list(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string): Promise<ProjectSkillListResponseDto> {
    return this.skills.enabledOn(tenant.tenantId, projectId);
  }

  @Delete(':skillId')
  @ApiOperation({ operationId: 'disableProjectSkill', summary: 'Disable a skill on the project' })
  @ApiParam(SKILL_ID)
  @HttpCode(204)
  @ApiNoContentResponse({ description: "The skill's tools are gone from the project" })
  async disable(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string, @Param('skillId') skillId: string): Promise<void> {
    await this.skills.disable(tenant.tenantId, projectId, skillId);
  }
}
