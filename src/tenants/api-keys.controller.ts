import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentTenant, TenantAuth, type Tenant } from '../common/auth/auth.decorators.js';
import { API_KEY_ID } from '../common/http/api-params.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { NO_STORE_HEADER, NoStore } from '../common/http/no-store.js';
import { ApiKeyListResponseDto, CreateApiKeyDto, CreatedApiKeyResponseDto } from './dto/tenant.dto.js';
import { ApiKeysService } from './api-keys.service.js';
import { MAX_LIVE_API_KEYS } from './api-keys.repository.js';

export const TOO_MANY_KEYS_DESCRIPTION = `too_many_api_keys: the tenant has ${MAX_LIVE_API_KEYS} live API keys, the most it may have (details: limit)`;

@ApiTags('api-keys')
@TenantAuth()
@Controller('v1/api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Get()
  @ApiOperation({ operationId: 'listApiKeys', summary: "List the caller's API keys" })
  @ApiOkResponse({ type: ApiKeyListResponseDto, description: "The caller's active keys (never the secrets)" })
  async list(@CurrentTenant() tenant: Tenant): Promise<ApiKeyListResponseDto> {
    return this.apiKeys.list(tenant.tenantId);
  }

  // A tenant rotates its own keys: issue the new one, move its clients, revoke the old one.
  @Post()
  @ApiOperation({ operationId: 'createApiKey', summary: 'Issue another API key for the caller (the key is in this answer only)' })
  @NoStore()
  @ApiCreatedResponse({ type: CreatedApiKeyResponseDto, description: 'The full key is in this answer only', headers: NO_STORE_HEADER })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description: 'invalid_key_grant: a role, projectIds, tools or expiresAt that do not go together',
  })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found: a projectIds entry is not one of the tenant’s projects' })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: `forbidden, forbidden_for_role (as on every tenant route); ${TOO_MANY_KEYS_DESCRIPTION}`,
  })
  async create(@CurrentTenant() tenant: Tenant, @Body() dto: CreateApiKeyDto): Promise<CreatedApiKeyResponseDto> {
    return this.apiKeys.issueAsAsked(tenant.tenantId, dto);
  }

  @Delete(':keyId')
  @HttpCode(204)
  @ApiOperation({ operationId: 'revokeApiKey', summary: "Revoke one of the caller's API keys (the caller's own included)" })
  @ApiParam(API_KEY_ID)
  @ApiNoContentResponse({ description: 'The key no longer authenticates' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'api_key_not_found' })
  async revoke(@CurrentTenant() tenant: Tenant, @Param('keyId') keyId: string): Promise<void> {
    await this.apiKeys.revoke(tenant.tenantId, keyId);
  }
}
