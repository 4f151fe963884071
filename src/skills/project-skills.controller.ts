import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiNoContentResponse, ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CurrentTenant, TenantAuth, type Tenant } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { EnableSkillDto, ProjectSkillListResponseDto, ProjectSkillResponseDto, SkillResponseDto } from './dto/skill.dto.js';
import { SkillsService } from './skills.service.js';

@ApiTags('skills')
@TenantAuth()
@Controller('v1/projects/:projectId/skills')
@ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found, skill_not_found, skill_not_enabled' })
export class ProjectSkillsController {
  constructor(private readonly skills: SkillsService) {}

  @Post()
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
    const { skill, enabledAt } = await this.skills.enable(tenant.tenantId, projectId, dto.skillId);
    return { projectId, skill: SkillResponseDto.from(skill), enabledAt: enabledAt.toISOString() };
  }

  @Get()
  @ApiOkResponse({ type: ProjectSkillListResponseDto })
  async list(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string): Promise<ProjectSkillListResponseDto> {
    return { items: (await this.skills.enabledOn(tenant.tenantId, projectId)).map((s) => SkillResponseDto.from(s)) };
  }

  @Delete(':skillId')
  @HttpCode(204)
  @ApiNoContentResponse({ description: "The skill's tools are gone from the project" })
  async disable(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string, @Param('skillId') skillId: string): Promise<void> {
    await this.skills.disable(tenant.tenantId, projectId, skillId);
  }
}
