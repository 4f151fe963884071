import { Controller, Delete, Get, HttpCode, Param } from '@nestjs/common';
import { ApiNoContentResponse, ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CurrentTenant, TenantAuth, type Tenant } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { ApiKeyListResponseDto, ApiKeyResponseDto } from './dto/tenant.dto.js';
import { ApiKeysService } from './api-keys.service.js';

@ApiTags('api-keys')
@TenantAuth()
@Controller('v1/api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Get()
  @ApiOkResponse({ type: ApiKeyListResponseDto, description: "The caller's active keys (never the secrets)" })
  async list(@CurrentTenant() tenant: Tenant): Promise<ApiKeyListResponseDto> {
    return { items: (await this.apiKeys.list(tenant.tenantId)).map((k) => ApiKeyResponseDto.from(k)) };
  }

  @Delete(':keyId')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'The key no longer authenticates' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'api_key_not_found' })
  async revoke(@CurrentTenant() tenant: Tenant, @Param('keyId') keyId: string): Promise<void> {
    await this.apiKeys.revoke(tenant.tenantId, keyId);
  }
}
