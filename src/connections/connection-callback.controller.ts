import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { type HttpExchange, RawHttpExchange } from '../common/http/http-exchange.decorator.js';
import { ConnectionsService } from './connections.service.js';

// Where the provider sends the person's browser back: no key, the link's single-use state is the credential.
@ApiTags('connections')
@Public('The person’s browser, sent back by the provider: the link’s single-use state is the credential')
@Controller('v1/connections/callback')
export class ConnectionCallbackController {
  constructor(private readonly connections: ConnectionsService) {}

  @Get()
  @ApiOperation({
    operationId: 'connectionCallback',
    summary: 'Where the provider sends the person back: the code is exchanged (PKCE, state, iss checked) and the connection becomes active',
  })
  @ApiResponse({
    status: 200,
    description: 'An HTML page saying the account is connected',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  @ApiResponse({
    status: 303,
    description:
      'To the provider’s verifyUrl with a one-time flow id (the connection stays pending until your app confirms it), else to the link’s returnTo',
  })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description: 'invalid_connection_link (unknown, used, expired or changed state), connection_failed',
  })
  async callback(
    @Query() query: Record<string, unknown>,
    @RawHttpExchange() exchange: HttpExchange,
    @Res() _reply: unknown,
  ): Promise<void> {
    const done = await this.connections.callback(query);
    // With verifyUrl: to the tenant's app with the one-time flow id (never a token); it confirms the user.
    if (done.verify !== null)
      return exchange.send(303, { Location: done.verify, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' }, null);
    if (done.returnTo !== null) return exchange.send(303, { Location: done.returnTo, 'Cache-Control': 'no-store' }, null);
    const page = `<!doctype html><meta charset="utf-8"><title>Connected</title><p>Your ${escapeHtml(done.provider)} account is connected. You can close this window.</p>`;
    exchange.send(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }, Buffer.from(page));
  }
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
