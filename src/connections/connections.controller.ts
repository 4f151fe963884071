import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBadRequestResponse, ApiCreatedResponse, ApiNoContentResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { CurrentTenant, Public, TenantAuth, type Tenant } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { type HttpExchange, RawHttpExchange } from '../common/http/http-exchange.decorator.js';
import { NO_STORE_HEADER, NoStore } from '../common/http/no-store.js';
import { ConnectionsService } from './connections.service.js';
import { AuthorizationLinkDto, AuthorizeConnectionDto, ConnectionListResponseDto, ListConnectionsQueryDto } from './dto/connection.dto.js';

const CONNECTION_ID = { name: 'connectionId', description: 'The connection’s id', schema: { type: 'string', format: 'uuid' } } as const;

// Admin keys only, but the callback, which the person's browser reaches from the provider: the link's state
// is its credential.
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

  @Get('callback')
  @Public('The person’s browser, sent back by the provider: the link’s single-use state is the credential')
  @ApiOperation({ operationId: 'connectionCallback', summary: 'Where the provider sends the person back: the code is exchanged (PKCE, state, iss checked) and the connection becomes active' })
  @ApiResponse({ status: 200, description: 'An HTML page saying the account is connected' })
  @ApiResponse({ status: 303, description: 'To the link’s returnTo' })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: 'invalid_connection_link (unknown, used, expired or changed state), connection_failed' })
  async callback(@Query() query: Record<string, unknown>, @RawHttpExchange() exchange: HttpExchange, @Res() _reply: unknown): Promise<void> {
    const done = await this.connections.callback(query);
    if (done.returnTo !== null) return exchange.send(303, { Location: done.returnTo, 'Cache-Control': 'no-store' }, null);
    const page = `<!doctype html><meta charset="utf-8"><title>Connected</title><p>Your ${escapeHtml(done.provider)} account is connected. You can close this window.</p>`;
    exchange.send(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }, Buffer.from(page));
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

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
