import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiBadGatewayResponse,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiPayloadTooLargeResponse,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { CurrentTenant, TenantAuth, type Tenant } from '../../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../../common/errors/error-response.dto.js';
import { SKILL_ID } from '../../common/http/api-params.js';
import { SkillChangeDto, SkillChangeListResponseDto, SkillChangeQueryDto, SkillRefreshResponseDto } from './dto/skill-change.dto.js';
import { SkillReviewService } from './skill-review.service.js';

const CHANGE_ID = { name: 'changeId', format: 'uuid' };

// Review of pinned definitions: admin keys only (no @AllowRoles).
@ApiTags('skills')
@TenantAuth()
@Controller('v1/skills/:skillId')
@ApiParam(SKILL_ID)
@ApiNotFoundResponse({ type: ErrorResponseDto, description: 'skill_not_found, change_not_found' })
export class SkillReviewController {
  constructor(private readonly review: SkillReviewService) {}

  @Post('refresh')
  @HttpCode(200)
  @ApiOperation({ operationId: 'refreshSkill', summary: "Read the skill's MCP source again now and record what changed since its review" })
  @ApiOkResponse({ type: SkillRefreshResponseDto })
  @ApiConflictResponse({
    type: ErrorResponseDto,
    description:
      'not_an_mcp_skill; authorization_required: a source that asks for OAuth is read with a connection not made yet (details.authorization.url)',
  })
  @ApiBadGatewayResponse({
    type: ErrorResponseDto,
    description: 'mcp_source_unavailable: the server could not be reached or answered an error; mcp_auth_discovery_failed',
  })
  refresh(@CurrentTenant() tenant: Tenant, @Param('skillId') skillId: string): Promise<SkillRefreshResponseDto> {
    return this.review.refresh(tenant.tenantId, skillId, tenant.user ?? null);
  }

  @Get('changes')
  @ApiOperation({ operationId: 'listSkillChanges', summary: 'List the changes of tool definitions waiting for review (or decided ones)' })
  @ApiOkResponse({ type: SkillChangeListResponseDto })
  changes(
    @CurrentTenant() tenant: Tenant,
    @Param('skillId') skillId: string,
    @Query() query: SkillChangeQueryDto,
  ): Promise<SkillChangeListResponseDto> {
    return this.review.list(tenant.tenantId, skillId, query.status);
  }

  @Post('changes/:changeId/accept')
  @HttpCode(200)
  @ApiParam(CHANGE_ID)
  @ApiOperation({ operationId: 'acceptSkillChange', summary: 'Accept a change: the proposed definition is pinned and served' })
  @ApiOkResponse({ type: SkillChangeDto })
  @ApiConflictResponse({
    type: ErrorResponseDto,
    description: 'change_already_decided, tool_name_collision (a new tool), skill_too_many_tools (past 128 tools)',
  })
  @ApiPayloadTooLargeResponse({ type: ErrorResponseDto, description: 'skill_too_large: the skill would take more than 256 KiB as stored' })
  @ApiUnprocessableEntityResponse({
    type: ErrorResponseDto,
    description: 'schema_refused: the proposed schema fails the vetting of a registration',
  })
  accept(@CurrentTenant() tenant: Tenant, @Param('skillId') skillId: string, @Param('changeId') changeId: string): Promise<SkillChangeDto> {
    return this.review.accept(tenant, skillId, changeId);
  }

  @Post('changes/:changeId/reject')
  @HttpCode(200)
  @ApiParam(CHANGE_ID)
  @ApiOperation({
    operationId: 'rejectSkillChange',
    summary: 'Reject a change: the reviewed definition stays served, and this one is not raised again',
  })
  @ApiOkResponse({ type: SkillChangeDto })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'change_already_decided' })
  reject(@CurrentTenant() tenant: Tenant, @Param('skillId') skillId: string, @Param('changeId') changeId: string): Promise<SkillChangeDto> {
    return this.review.reject(tenant, skillId, changeId);
  }
}
