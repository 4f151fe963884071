import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { CurrentTenant, TenantAuth, type Tenant } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { NO_STORE_HEADER, NoStore } from '../common/http/no-store.js';
import { ConnectionsService } from './connections.service.js';
import { AuthorizationLinkDto, AuthorizeConnectionDto, ConnectionListResponseDto, ListConnectionsQueryDto } from './dto/connection.dto.js';

const CONNECTION_ID = { name: 'connectionId', description: 'The connection’s id', schema: { type: 'string', format: 'uuid' } } as const;

// Admin keys only (the callback, which the person's browser reaches, is connection-callback.controller.ts).
@ApiTags('connections')
@TenantAuth()
@Controller('v1/connections')
export class ConnectionsController {
  constructor(private readonly connections: ConnectionsService) {}

  @Post('authorize')
  @NoStore()
  @ApiOperation({ operationId: 'authorizeConnection', summary: 'A link a person opens to connect their account at a provider (single use, 10 minutes)' })
  @ApiCreatedResponse({ type: AuthorizationLinkDto, headers: NO_STORE_HEADER })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'auth_provider_not_found' })
  @ApiResponse({ status: 422, type: ErrorResponseDto, description: 'invalid_user, invalid_auth_provider (returnTo)' })
  @ApiResponse({ status: 503, type: ErrorResponseDto, description: 'public_url_required' })
  authorize(@CurrentTenant() tenant: Tenant, @Body() dto: AuthorizeConnectionDto): Promise<AuthorizationLinkDto> {
    return this.connections.authorize(tenant.tenantId, dto);
  }

  @Get()
  @ApiOperation({ operationId: 'listConnections', summary: 'List connections (never a token)' })
  @ApiOkResponse({ type: ConnectionListResponseDto })
  list(@CurrentTenant() tenant: Tenant, @Query() query: ListConnectionsQueryDto): Promise<ConnectionListResponseDto> {
    return this.connections.list(tenant.tenantId, query);
  }

  @Delete(':connectionId')
  @HttpCode(204)
  @ApiOperation({ operationId: 'revokeConnection', summary: 'Revoke a connection (at the provider too, when it has a revocation endpoint)' })
  @ApiParam(CONNECTION_ID)
  @ApiNoContentResponse({ description: 'Revoked: its tokens are not used again' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'connection_not_found' })
  async revoke(@CurrentTenant() tenant: Tenant, @Param('connectionId') id: string): Promise<void> {
    await this.connections.revoke(tenant.tenantId, id);
  }
}

