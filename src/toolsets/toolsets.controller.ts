import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiPayloadTooLargeResponse,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { AllowRoles, CurrentTenant, ProjectScoped, type Tenant, TenantAuth } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { PROJECT_ID, TOOLSET_SLUG } from '../common/http/api-params.js';
import { ToolsetBodyDto, ToolsetListResponseDto, ToolsetResponseDto } from './dto/toolset.dto.js';
import { ToolsetsService } from './toolsets.service.js';

@ApiTags('toolsets')
@TenantAuth()
@Controller('v1/projects/:projectId/toolsets')
@ProjectScoped('projectId')
@ApiParam(PROJECT_ID)
@ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found, toolset_not_found' })
export class ToolsetsController {
  constructor(private readonly toolsets: ToolsetsService) {}

  @Post()
  @ApiOperation({ operationId: 'createToolset', summary: 'Create a toolset: the tools an agent sees, named and described for it' })
  @ApiCreatedResponse({ type: ToolsetResponseDto })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'toolset_slug_taken; tool_name_collision (details.collisions)' })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: 'invalid_toolset: names the entry and what is wrong with it' })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description:
      'forbidden, forbidden_for_role (as on every tenant route); too_many_toolsets: the project has 50; tenant_budget_exceeded: the tenant has its maxToolsets (details: budget, limit, inUse, asked)',
  })
  @ApiPayloadTooLargeResponse({ type: ErrorResponseDto, description: 'toolset_too_large: its entries are past 256 KiB as stored' })
  create(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Body() body: ToolsetBodyDto,
  ): Promise<ToolsetResponseDto> {
    return this.toolsets.create(tenant.tenantId, projectId, body);
  }

  @Get()
  @AllowRoles('approver')
  @ApiOperation({ operationId: 'listToolsets', summary: "List the project's toolsets" })
  @ApiOkResponse({ type: ToolsetListResponseDto })
  list(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string): Promise<ToolsetListResponseDto> {
    return this.toolsets.list(tenant.tenantId, projectId);
  }

  @Get(':slug')
  @AllowRoles('approver')
  @ApiParam(TOOLSET_SLUG)
  @ApiOperation({ operationId: 'getToolset', summary: 'Get a toolset and the names it exposes now' })
  @ApiOkResponse({ type: ToolsetResponseDto })
  get(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string, @Param('slug') slug: string): Promise<ToolsetResponseDto> {
    return this.toolsets.get(tenant.tenantId, projectId, slug);
  }

  @Put(':slug')
  @ApiParam(TOOLSET_SLUG)
  @ApiOperation({ operationId: 'replaceToolset', summary: 'Replace a toolset (its slug too)' })
  @ApiOkResponse({ type: ToolsetResponseDto })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'toolset_slug_taken; tool_name_collision (details.collisions)' })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: 'invalid_toolset: names the entry and what is wrong with it' })
  @ApiPayloadTooLargeResponse({ type: ErrorResponseDto, description: 'toolset_too_large: its entries are past 256 KiB as stored' })
  replace(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Param('slug') slug: string,
    @Body() body: ToolsetBodyDto,
  ): Promise<ToolsetResponseDto> {
    return this.toolsets.replace(tenant.tenantId, projectId, slug, body);
  }

  @Delete(':slug')
  @HttpCode(204)
  @ApiParam(TOOLSET_SLUG)
  @ApiOperation({ operationId: 'deleteToolset', summary: 'Delete a toolset (keys bound to it can use nothing)' })
  @ApiNoContentResponse({ description: 'Deleted' })
  delete(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string, @Param('slug') slug: string): Promise<void> {
    return this.toolsets.delete(tenant.tenantId, projectId, slug);
  }
}
