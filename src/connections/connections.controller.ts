import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { AllowRoles, CurrentTenant, TenantAuth, type Tenant } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { NO_STORE_HEADER, NoStore } from '../common/http/no-store.js';
import { CONNECTIONS_MAX, ConnectionsService, LINKS_WAITING_MAX } from './connections.service.js';
import {
  AuthorizationLinkDto,
  AuthorizeConnectionDto,
  ConnectionListResponseDto,
  ListConnectionsQueryDto,
  VerifiedConnectionDto,
  VerifyConnectionDto,
} from './dto/connection.dto.js';

const CONNECTION_ID = { name: 'connectionId', description: 'The connection’s id', schema: { type: 'string', format: 'uuid' } } as const;

// Admin keys only, but verify (the callback, which the person's browser reaches, is connection-callback.controller.ts).
@ApiTags('connections')
@TenantAuth()
@Controller('v1/connections')
export class ConnectionsController {
  constructor(private readonly connections: ConnectionsService) {}

  @Post('authorize')
  @NoStore()
  @ApiOperation({
    operationId: 'authorizeConnection',
    summary: 'A link a person opens to connect their account at a provider (single use, 10 minutes)',
  })
  @ApiCreatedResponse({ type: AuthorizationLinkDto, headers: NO_STORE_HEADER })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'auth_provider_not_found' })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: `forbidden, forbidden_for_role (as on every tenant route); too_many_connections: the tenant keeps ${CONNECTIONS_MAX} (details.limit)`,
  })
  @ApiResponse({ status: 422, type: ErrorResponseDto, description: 'invalid_user, invalid_auth_provider (returnTo)' })
  @ApiTooManyRequestsResponse({
    type: ErrorResponseDto,
    description: `connection_links_exceeded: the tenant has ${LINKS_WAITING_MAX} links waiting (details.limit)`,
  })
  @ApiResponse({ status: 503, type: ErrorResponseDto, description: 'public_url_required' })
  authorize(@CurrentTenant() tenant: Tenant, @Body() dto: AuthorizeConnectionDto): Promise<AuthorizationLinkDto> {
    return this.connections.authorize(tenant.tenantId, dto);
  }

  // The tenant's app (the key that names its users, or an admin) confirms who completed a link.
  @Post('verify')
  @HttpCode(200)
  @AllowRoles('agent')
  @NoStore()
  @ApiOperation({
    operationId: 'verifyConnection',
    summary:
      'Confirm, from your app, which user completed a link of a provider with verifyUrl: the connection becomes active only for the link’s own user (agent keys need actAsUsers)',
  })
  @ApiOkResponse({ type: VerifiedConnectionDto, headers: NO_STORE_HEADER })
  @ApiResponse({
    status: 400,
    type: ErrorResponseDto,
    description: 'invalid_verification_flow (unknown, used or expired: single use, 10 minutes)',
  })
  @ApiResponse({
    status: 403,
    type: ErrorResponseDto,
    description: 'connection_user_mismatch (the connection is discarded), user_assertion_not_allowed (an agent key without actAsUsers)',
  })
  @ApiResponse({ status: 422, type: ErrorResponseDto, description: 'invalid_user' })
  verify(@CurrentTenant() tenant: Tenant, @Body() dto: VerifyConnectionDto): Promise<VerifiedConnectionDto> {
    return this.connections.verify(tenant, dto);
  }

  @Get()
  @ApiOperation({ operationId: 'listConnections', summary: 'List connections, oldest first (never a token)' })
  @ApiOkResponse({ type: ConnectionListResponseDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: 'invalid_cursor; validation_failed (details.fields): limit is 1-100' })
  list(@CurrentTenant() tenant: Tenant, @Query() query: ListConnectionsQueryDto): Promise<ConnectionListResponseDto> {
    return this.connections.list(tenant.tenantId, query);
  }

  @Delete(':connectionId')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'revokeConnection',
    summary: 'Revoke a connection (at the provider too, when it has a revocation endpoint)',
  })
  @ApiParam(CONNECTION_ID)
  @ApiNoContentResponse({ description: 'Revoked: its tokens are not used again' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'connection_not_found' })
  async revoke(@CurrentTenant() tenant: Tenant, @Param('connectionId') id: string): Promise<void> {
    await this.connections.revoke(tenant.tenantId, id);
  }
}
