import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { AdminAuth } from '../common/auth/auth.decorators.js';
import { API_KEY_ID, TENANT_ID } from '../common/http/api-params.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { NO_STORE_HEADER, NoStore } from '../common/http/no-store.js';
import {
  ApiKeyListResponseDto,
  CreateApiKeyDto,
  CreatedApiKeyResponseDto,
  CreateTenantDto,
  TenantListResponseDto,
  TenantResponseDto,
  UpdateTenantDto,
} from './dto/tenant.dto.js';
import { ApiKeysService } from './api-keys.service.js';
import { TOO_MANY_KEYS_DESCRIPTION } from './api-keys.controller.js';
import { TenantsService } from './tenants.service.js';

@ApiTags('admin')
@AdminAuth()
@Controller('v1/admin/tenants')
export class AdminTenantsController {
  constructor(
    private readonly tenants: TenantsService,
    private readonly apiKeys: ApiKeysService,
  ) {}

  @Post()
  @ApiOperation({ operationId: 'createTenant', summary: 'Create a tenant' })
  @ApiCreatedResponse({ type: TenantResponseDto })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description: 'validation_failed (details.fields), invalid_json, tenant_name_like_id (a name shaped like a tenant id)',
  })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'tenant_name_taken' })
  async create(@Body() dto: CreateTenantDto): Promise<TenantResponseDto> {
    return this.tenants.create(dto.name);
  }

  @Get()
  @ApiOperation({ operationId: 'listTenants', summary: 'List the tenants' })
  @ApiOkResponse({ type: TenantListResponseDto })
  async list(): Promise<TenantListResponseDto> {
    return this.tenants.list();
  }

  @Patch(':tenantId')
  @ApiOperation({
    operationId: 'updateTenant',
    summary: 'Grant a tenant the roots inside which its own keys may place project workspaces, and set its own budgets',
  })
  @ApiParam(TENANT_ID)
  @ApiOkResponse({ type: TenantResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'tenant_not_found' })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: 'workspace_roots_not_allowed' })
  async update(@Param('tenantId') tenantId: string, @Body() dto: UpdateTenantDto): Promise<TenantResponseDto> {
    return this.tenants.update(tenantId, dto);
  }

  @Delete(':tenantId')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteTenant', summary: 'Delete a tenant with its keys, projects and skills' })
  @ApiParam(TENANT_ID)
  @ApiNoContentResponse({ description: 'The tenant, its keys and its projects are gone' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'tenant_not_found' })
  async remove(@Param('tenantId') tenantId: string): Promise<void> {
    await this.tenants.delete(tenantId);
  }

  @Get(':tenantId/api-keys')
  @ApiOperation({ operationId: 'listTenantApiKeys', summary: "List a tenant's active API keys (never the secrets)" })
  @ApiParam(TENANT_ID)
  @ApiOkResponse({ type: ApiKeyListResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'tenant_not_found' })
  async listKeys(@Param('tenantId') tenantId: string): Promise<ApiKeyListResponseDto> {
    return this.tenants.listKeys(tenantId);
  }

  @Post(':tenantId/api-keys')
  @ApiOperation({ operationId: 'issueTenantApiKey', summary: 'Issue an API key for a tenant (the key is in this answer only)' })
  @ApiParam(TENANT_ID)
  @NoStore()
  @ApiCreatedResponse({ type: CreatedApiKeyResponseDto, description: 'The full key is in this answer only', headers: NO_STORE_HEADER })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'tenant_not_found' })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: `A tenant API key was sent to an admin route; ${TOO_MANY_KEYS_DESCRIPTION}`,
  })
  async issueKey(@Param('tenantId') tenantId: string, @Body() dto: CreateApiKeyDto): Promise<CreatedApiKeyResponseDto> {
    return this.tenants.issueKey(tenantId, dto);
  }

  @Delete(':tenantId/api-keys/:keyId')
  @HttpCode(204)
  @ApiOperation({ operationId: 'revokeTenantApiKey', summary: "Revoke one of a tenant's API keys" })
  @ApiParam(TENANT_ID)
  @ApiParam(API_KEY_ID)
  @ApiNoContentResponse({ description: 'The key no longer authenticates' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'api_key_not_found' })
  async revokeKey(@Param('tenantId') tenantId: string, @Param('keyId') keyId: string): Promise<void> {
    await this.apiKeys.revoke(tenantId, keyId);
  }
}
