import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import { AllowRoles, CurrentTenant, ProjectScoped, type Tenant, TenantAuth } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { INVOCATION_ID, PROJECT_ID } from '../common/http/api-params.js';
import { ApprovalsService, type Decider } from './approvals.service.js';
import { ApproveBodyDto, DecisionBodyDto, DecisionResponseDto } from './dto/approval.dto.js';

@ApiTags('invocations')
@TenantAuth()
@Controller('v1/projects/:projectId/invocations/:invocationId')
@ProjectScoped('projectId')
@ApiParam(PROJECT_ID)
@ApiParam(INVOCATION_ID)
@ApiNotFoundResponse({ type: ErrorResponseDto, description: "project_not_found, approval_not_found (also another tenant's call)" })
@ApiConflictResponse({
  type: ErrorResponseDto,
  description:
    'approval_already_decided (a decision is taken once), approval_expired; on approve, approval_arguments_changed (argumentsDigest names other arguments: nothing ran)',
})
@ApiForbiddenResponse({
  type: ErrorResponseDto,
  description:
    'approval_self_decision: the key that made the call cannot decide it; forbidden_for_role: only admin and approver keys decide',
})
export class ApprovalsController {
  constructor(private readonly approvals: ApprovalsService) {}

  @Post('approve')
  @HttpCode(200)
  @AllowRoles('approver')
  @ApiOperation({
    operationId: 'approveInvocation',
    summary: 'Approve a call parked for approval: it runs now, and this answers its outcome',
  })
  @ApiOkResponse({ type: DecisionResponseDto })
  @ApiServiceUnavailableResponse({ type: ErrorResponseDto, description: 'shutting_down: approve it on another instance' })
  approve(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Param('invocationId') invocationId: string,
    @Body() body: ApproveBodyDto,
  ): Promise<DecisionResponseDto> {
    return this.approvals.approve(
      tenant.tenantId,
      projectId,
      invocationId,
      body.reason ?? null,
      deciderOf(tenant),
      body.argumentsDigest ?? null,
    );
  }

  @Post('deny')
  @HttpCode(200)
  @AllowRoles('approver')
  @ApiOperation({ operationId: 'denyInvocation', summary: 'Deny a call parked for approval: it never runs' })
  @ApiOkResponse({ type: DecisionResponseDto })
  deny(
    @CurrentTenant() tenant: Tenant,
    @Param('projectId') projectId: string,
    @Param('invocationId') invocationId: string,
    @Body() body: DecisionBodyDto,
  ): Promise<DecisionResponseDto> {
    return this.approvals.deny(tenant.tenantId, projectId, invocationId, body.reason ?? null, deciderOf(tenant));
  }
}

const deciderOf = (tenant: Tenant): Decider => ({ keyId: tenant.apiKeyId, name: tenant.keyName });
