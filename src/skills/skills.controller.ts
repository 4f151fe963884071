import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import {
  ApiBody,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { CurrentTenant, TenantAuth, type Tenant } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { SKILL_ID } from '../common/http/api-params.js';
import { NO_STORE_HEADER, NoStore } from '../common/http/no-store.js';
import { PageQueryDto } from '../common/pagination/cursor.js';
import { RegisteredSkillResponseDto, SkillListResponseDto, SkillResponseDto } from './dto/skill.dto.js';
import { SKILL_BODY_SCHEMA } from './skill-body.schema.js';
import { SkillsService } from './skills.service.js';

const SKILL_BODY = { schema: SKILL_BODY_SCHEMA as unknown as Record<string, unknown> };
const REFUSED = 'invalid_skill (the body), or schema_refused: details name the tool, the schema, the location and the reason';

@ApiTags('skills')
@TenantAuth()
@Controller('v1/skills')
export class SkillsController {
  constructor(private readonly skills: SkillsService) {}

  @Post()
  @ApiOperation({ operationId: 'registerSkill', summary: 'Register a skill: tools run by an http, command or MCP executor' })
  @ApiBody(SKILL_BODY)
  @NoStore()
  @ApiCreatedResponse({ type: RegisteredSkillResponseDto, description: 'The signing secret is in this answer only', headers: NO_STORE_HEADER })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'skill_name_taken' })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: REFUSED })
  async register(@CurrentTenant() tenant: Tenant, @Body() body: unknown): Promise<RegisteredSkillResponseDto> {
    return this.skills.register(tenant.tenantId, body);
  }

  @Get()
  @ApiOperation({ operationId: 'listSkills', summary: "List the tenant's skills" })
  @ApiOkResponse({ type: SkillListResponseDto })
  async list(@CurrentTenant() tenant: Tenant, @Query() query: PageQueryDto): Promise<SkillListResponseDto> {
    return this.skills.list(tenant.tenantId, query.limit ?? 20, query.cursor);
  }

  @Get(':skillId')
  @ApiOperation({ operationId: 'getSkill', summary: 'Get a skill' })
  @ApiParam(SKILL_ID)
  @ApiOkResponse({ type: SkillResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'skill_not_found' })
  async get(@CurrentTenant() tenant: Tenant, @Param('skillId') skillId: string): Promise<SkillResponseDto> {
    return this.skills.get(tenant.tenantId, skillId);
  }

  @Put(':skillId')
  @ApiOperation({ operationId: 'updateSkill', summary: 'Replace a skill with a new version' })
  @ApiParam(SKILL_ID)
  @ApiBody(SKILL_BODY)
  @ApiOkResponse({ type: SkillResponseDto, description: 'The new version; the signing secret is unchanged' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'skill_not_found' })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'skill_version_exists, tool_name_collision' })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: REFUSED })
  async update(@CurrentTenant() tenant: Tenant, @Param('skillId') skillId: string, @Body() body: unknown): Promise<SkillResponseDto> {
    return this.skills.update(tenant.tenantId, skillId, body);
  }

  @Delete(':skillId')
  @ApiOperation({ operationId: 'deleteSkill', summary: 'Delete a skill (disabled on every project)' })
  @ApiParam(SKILL_ID)
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Deleted, and disabled on every project' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'skill_not_found' })
  async remove(@CurrentTenant() tenant: Tenant, @Param('skillId') skillId: string): Promise<void> {
    await this.skills.delete(tenant.tenantId, skillId);
  }
}
