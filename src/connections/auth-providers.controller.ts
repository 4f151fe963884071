import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
  ApiBadGatewayResponse,
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
import { CurrentTenant, TenantAuth, type Tenant } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { AuthProvidersService } from './auth-providers.service.js';
import {
  AuthProviderListResponseDto,
  AuthProviderResponseDto,
  CreateAuthProviderDto,
  UpdateAuthProviderDto,
} from './dto/auth-provider.dto.js';

const PROVIDER_ID = { name: 'providerId', description: 'The auth provider’s id', schema: { type: 'string', format: 'uuid' } } as const;
const REFUSED =
  'invalid_auth_provider: endpoints missing, not https (http only for a host in FETCH_ALLOW_HOSTS); url_blocked: an address the fetch_url policy refuses';

// Admin keys only (no @AllowRoles): a provider holds the tenant's client secret.
@ApiTags('connections')
@TenantAuth()
@Controller('v1/auth-providers')
export class AuthProvidersController {
  constructor(private readonly providers: AuthProvidersService) {}

  @Post()
  @ApiOperation({
    operationId: 'createAuthProvider',
    summary: 'Add an OAuth authorization server the tenant’s tools act through (the client secret is stored sealed, never shown again)',
  })
  @ApiCreatedResponse({ type: AuthProviderResponseDto })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'auth_provider_slug_taken' })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: REFUSED })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: 'forbidden, forbidden_for_role (as on every tenant route); too_many_auth_providers: the tenant has 50 (details.limit)',
  })
  @ApiBadGatewayResponse({ type: ErrorResponseDto, description: 'discovery_failed: the issuer’s discovery document could not be read' })
  create(@CurrentTenant() tenant: Tenant, @Body() dto: CreateAuthProviderDto): Promise<AuthProviderResponseDto> {
    return this.providers.create(tenant.tenantId, dto);
  }

  @Get()
  @ApiOperation({ operationId: 'listAuthProviders', summary: 'List the tenant’s auth providers' })
  @ApiOkResponse({ type: AuthProviderListResponseDto })
  list(@CurrentTenant() tenant: Tenant): Promise<AuthProviderListResponseDto> {
    return this.providers.list(tenant.tenantId);
  }

  @Get(':providerId')
  @ApiOperation({ operationId: 'getAuthProvider', summary: 'Get an auth provider (with the redirect URI to register at it)' })
  @ApiParam(PROVIDER_ID)
  @ApiOkResponse({ type: AuthProviderResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'auth_provider_not_found' })
  get(@CurrentTenant() tenant: Tenant, @Param('providerId') id: string): Promise<AuthProviderResponseDto> {
    return this.providers.get(tenant.tenantId, id);
  }

  @Patch(':providerId')
  @ApiOperation({ operationId: 'updateAuthProvider', summary: 'Change an auth provider (a new issuer alone is discovered again)' })
  @ApiParam(PROVIDER_ID)
  @ApiOkResponse({ type: AuthProviderResponseDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'auth_provider_not_found' })
  @ApiUnprocessableEntityResponse({ type: ErrorResponseDto, description: REFUSED })
  update(
    @CurrentTenant() tenant: Tenant,
    @Param('providerId') id: string,
    @Body() dto: UpdateAuthProviderDto,
  ): Promise<AuthProviderResponseDto> {
    return this.providers.update(tenant.tenantId, id, dto);
  }

  @Delete(':providerId')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'deleteAuthProvider',
    summary: 'Delete an auth provider and every connection to it (its tokens are never used again)',
  })
  @ApiParam(PROVIDER_ID)
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'auth_provider_not_found' })
  async delete(@CurrentTenant() tenant: Tenant, @Param('providerId') id: string): Promise<void> {
    await this.providers.delete(tenant.tenantId, id);
  }
}
