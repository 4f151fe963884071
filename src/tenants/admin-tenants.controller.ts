import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { AdminAuth } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import {
  ApiKeyResponseDto,
  CreateApiKeyDto,
  CreatedApiKeyResponseDto,
  CreateTenantDto,
  TenantListResponseDto,
  TenantResponseDto,
} from './dto/tenant.dto.js';
import { ApiKeysService } from './api-keys.service.js';
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
  @ApiCreatedResponse({ type: TenantResponseDto })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'tenant_name_taken' })
  async create(@Body() dto: CreateTenantDto): Promise<TenantResponseDto> {
    return TenantResponseDto.from(await this.tenants.create(dto.name));
  }

  @Get()
  @ApiOkResponse({ type: TenantListResponseDto })
  async list(): Promise<TenantListResponseDto> {
    return { items: (await this.tenants.list()).map((t) => TenantResponseDto.from(t)) };
  }

  @Delete(':tenantId')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'The tenant, its keys and its projects are gone' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'tenant_not_found' })
  async remove(@Param('tenantId') tenantId: string): Promise<void> {
    await this.tenants.delete(tenantId);
  }

  @Post(':tenantId/api-keys')
  @ApiCreatedResponse({ type: CreatedApiKeyResponseDto, description: 'The full key is in this answer only' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'tenant_not_found' })
  async issueKey(@Param('tenantId') tenantId: string, @Body() dto: CreateApiKeyDto): Promise<CreatedApiKeyResponseDto> {
    const { key, record } = await this.tenants.issueKey(tenantId, dto.name ?? 'default');
    return { ...ApiKeyResponseDto.from(record), key, tenantId };
  }

  @Delete(':tenantId/api-keys/:keyId')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'The key no longer authenticates' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'api_key_not_found' })
  async revokeKey(@Param('tenantId') tenantId: string, @Param('keyId') keyId: string): Promise<void> {
    await this.apiKeys.revoke(tenantId, keyId);
  }
}
