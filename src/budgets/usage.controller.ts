import { Controller, Get, Param } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { AdminAuth, CurrentTenant, TenantAuth, type Tenant } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { TENANT_ID } from '../common/http/api-params.js';
import { TenantUsageResponseDto } from './dto/budgets.dto.js';
import { BudgetsService } from './budgets.service.js';

@ApiTags('usage')
@TenantAuth()
@Controller('v1/usage')
export class UsageController {
  constructor(private readonly budgets: BudgetsService) {}

  @Get()
  @ApiOperation({ operationId: 'getUsage', summary: "The tenant's budgets and what it holds of each now" })
  @ApiOkResponse({ type: TenantUsageResponseDto })
  get(@CurrentTenant() tenant: Tenant): Promise<TenantUsageResponseDto> {
    return this.budgets.usageOf(tenant.tenantId);
  }
}

@ApiTags('admin')
@AdminAuth()
@Controller('v1/admin/tenants')
export class AdminUsageController {
  constructor(private readonly budgets: BudgetsService) {}

  @Get(':tenantId/usage')
  @ApiOperation({ operationId: 'getTenantUsage', summary: "A tenant's budgets and what it holds of each now" })
  @ApiParam(TENANT_ID)
  @ApiOkResponse({ type: TenantUsageResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'tenant_not_found' })
  get(@Param('tenantId') tenantId: string): Promise<TenantUsageResponseDto> {
    return this.budgets.usageOf(tenantId);
  }
}
