import { Body, Controller, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { AllowRoles, CurrentTenant, ProjectScoped, type Tenant, TenantAuth } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { PROJECT_ID } from '../common/http/api-params.js';
import { PolicyBodyDto, PolicyCheckBodyDto, PolicyCheckResponseDto, PolicyResponseDto, PolicySchemaResponseDto } from './dto/policy.dto.js';
import { PoliciesService } from './policies.service.js';

const INVALID =
  "policy_invalid: the set does not parse or does not validate against the schema; details.problems gives Cedar's messages and positions. The set in force is unchanged.";

@ApiTags('policies')
@TenantAuth()
@Controller('v1')
export class PoliciesController {
  constructor(private readonly policies: PoliciesService) {}

  @Get('policies/schema')
  @AllowRoles('agent', 'approver')
  @ApiOperation({
    operationId: 'getPolicySchema',
    summary: "Toolgate's Cedar schema: the principal, action, resource and context every call is decided on",
  })
  @ApiOkResponse({ type: PolicySchemaResponseDto })
  schema(): PolicySchemaResponseDto {
    return this.policies.schema();
  }

  @Get('policies')
  @AllowRoles('approver')
  @ApiOperation({ operationId: 'getTenantPolicies', summary: "The tenant's policy set, its version and who set it" })
  @ApiOkResponse({ type: PolicyResponseDto })
  getForTenant(@CurrentTenant() tenant: Tenant): Promise<PolicyResponseDto> {
    return this.policies.getForTenant(tenant);
  }

  @Put('policies')
  @ApiOperation({ operationId: 'setTenantPolicies', summary: "Replace the tenant's policy set (every project of the tenant evaluates it)" })
  @ApiOkResponse({ type: PolicyResponseDto })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: INVALID })
  setForTenant(@CurrentTenant() tenant: Tenant, @Body() body: PolicyBodyDto): Promise<PolicyResponseDto> {
    return this.policies.setForTenant(tenant, body.text);
  }

  @Get('projects/:projectId/policies')
  @ProjectScoped('projectId')
  @AllowRoles('approver')
  @ApiParam(PROJECT_ID)
  @ApiOperation({ operationId: 'getProjectPolicies', summary: "The project's own policy set (the tenant's applies beside it)" })
  @ApiOkResponse({ type: PolicyResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found' })
  getForProject(@CurrentTenant() tenant: Tenant, @Param('projectId') projectId: string): Promise<PolicyResponseDto> {
    return this.policies.getForProject(tenant, projectId);
  }

  @Put('projects/:projectId/policies')
  @ProjectScoped('projectId')
  @ApiParam(PROJECT_ID)
  @ApiOperation({ operationId: 'setProjectPolicies', summary: "Replace the project's policy set" })
  @ApiOkResponse({ type: PolicyResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found' })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: INVALID })
  setForProject(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Body() body: PolicyBodyDto,
  ): Promise<PolicyResponseDto> {
    return this.policies.setForProject(tenant, projectId, body.text);
  }

  @Post('projects/:projectId/policies/check')
  @ProjectScoped('projectId')
  @HttpCode(200)
  @AllowRoles('approver')
  @ApiParam(PROJECT_ID)
  @ApiOperation({ operationId: 'checkPolicies', summary: 'What the policies in force decide of a call, without running or recording it' })
  @ApiOkResponse({ type: PolicyCheckResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found, tool_not_found' })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: 'invalid_arguments: the arguments do not fit the tool' })
  check(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Body() body: PolicyCheckBodyDto,
  ): Promise<PolicyCheckResponseDto> {
    return this.policies.check(tenant, projectId, body);
  }
}
