import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import {
  ApiBadGatewayResponse,
  ApiBody,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiPayloadTooLargeResponse,
  ApiTooManyRequestsResponse,
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
const TOO_LARGE = 'skill_too_large: its tools take more than 256 KiB as stored (details: bytes, limit)';
const BUSY =
  "rate_limited, with Retry-After; skill_registrations_busy: one registration or update of the tenant's skills is checked at a time and sixteen more may wait; send it again after Retry-After";

const NEEDS_CONNECTION =
  'authorization_required: an MCP source that asks for OAuth is read with a connection not made yet (details.authorization.url: open it, then send the request again)';
const DISCOVERY_FAILED =
  'mcp_auth_discovery_failed: the MCP source’s authorization server could not be found or Toolgate could not register there';

@ApiTags('skills')
@TenantAuth()
@Controller('v1/skills')
export class SkillsController {
  constructor(private readonly skills: SkillsService) {}

  @Post()
  @ApiOperation({ operationId: 'registerSkill', summary: 'Register a skill: tools run by an http, command or MCP executor' })
  @ApiBody(SKILL_BODY)
  @NoStore()
  @ApiCreatedResponse({
    type: RegisteredSkillResponseDto,
    description: 'The signing secret is in this answer only',
    headers: NO_STORE_HEADER,
  })
  @ApiConflictResponse({ type: ErrorResponseDto, description: `skill_name_taken; ${NEEDS_CONNECTION}` })
  @ApiBadGatewayResponse({ type: ErrorResponseDto, description: DISCOVERY_FAILED })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description:
      'forbidden, forbidden_for_role (as on every tenant route); tenant_budget_exceeded: the tenant has its maxSkills (details: budget, limit, inUse, asked)',
  })
  @ApiPayloadTooLargeResponse({ type: ErrorResponseDto, description: TOO_LARGE })
  @ApiTooManyRequestsResponse({ type: ErrorResponseDto, description: BUSY })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: REFUSED })
  async register(@CurrentTenant() tenant: Tenant, @Body() body: unknown): Promise<RegisteredSkillResponseDto> {
    return this.skills.register(tenant.tenantId, body, tenant.user ?? null);
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
  @ApiConflictResponse({ type: ErrorResponseDto, description: `skill_version_exists, tool_name_collision; ${NEEDS_CONNECTION}` })
  @ApiBadGatewayResponse({ type: ErrorResponseDto, description: DISCOVERY_FAILED })
  @ApiPayloadTooLargeResponse({ type: ErrorResponseDto, description: TOO_LARGE })
  @ApiTooManyRequestsResponse({ type: ErrorResponseDto, description: BUSY })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: REFUSED })
  async update(@CurrentTenant() tenant: Tenant, @Param('skillId') skillId: string, @Body() body: unknown): Promise<SkillResponseDto> {
    return this.skills.update(tenant.tenantId, skillId, body, tenant.user ?? null);
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
