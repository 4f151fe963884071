import { Body, Controller, Get, Inject, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/auth/auth.decorators.js';
import { serviceBaseUrl } from '../common/auth/oauth-resource.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { type HttpExchange, RawHttpExchange } from '../common/http/http-exchange.decorator.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { OAuthHostGuard } from './oauth-host.guard.js';
import { CurrentOrigin, type RequestOrigin } from './oauth-base-url.js';
import { OAuthAuthorizationService } from './oauth-authorization.service.js';
import { OAuthProtocolError } from './oauth.errors.js';
import { OAuthTokensService } from './oauth-tokens.service.js';
import { TenantRateLimiter } from '../rate-limit/tenant-rate-limiter.js';

const OAUTH_ERROR = {
  type: 'object' as const,
  properties: { error: { type: 'string' as const }, error_description: { type: 'string' as const } },
  required: ['error'],
};
const FORM = (properties: Record<string, { type: 'string'; description?: string; enum?: string[] }>, required: string[]) => ({
  schema: { type: 'object' as const, properties, required, additionalProperties: true },
});
const NO_STORE = { 'Cache-Control': 'no-store', 'Content-Type': 'application/json' };

// The OAuth 2.1 protocol endpoints, public by nature (a client has no credentials yet). Their answers and
// errors are OAuth's own JSON shapes ({error, error_description}), which OAuth clients parse.
@ApiTags('oauth')
@Public('OAuth 2.1: a client has no credentials yet; it proves itself with its code, PKCE verifier or refresh token')
@UseGuards(OAuthHostGuard)
@ApiResponse({
  status: 403,
  type: ErrorResponseDto,
  description: "host_not_allowed: without PUBLIC_URL, a Host that is not one of the service's names (ALLOWED_HOSTS)",
})
@Controller('oauth')
export class OAuthController {
  constructor(
    private readonly authorization: OAuthAuthorizationService,
    private readonly tokens: OAuthTokensService,
    private readonly limiter: TenantRateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('authorize')
  @ApiOperation({
    operationId: 'oauthAuthorize',
    summary: 'Authorization endpoint: checks the request and sends the browser to the consent page',
    description:
      'Authorization code with PKCE (S256) only; resource (RFC 8707) must be a project MCP URL of this service; client_id a registered client or a client ID metadata document URL (https). ' +
      'A valid request answers 302 to /console/oauth/consent?request=<id>. A request with a bad PKCE, resource or scope goes back to a loopback redirect URI with error=…, and is refused here (400) for any other, so the endpoint never redirects to a site on an error; an unknown client or redirect URI is refused here (400).',
  })
  @ApiResponse({ status: 302, description: 'To the consent page, or back to the client with error=…' })
  @ApiResponse({
    status: 400,
    type: ErrorResponseDto,
    description:
      'oauth_request_invalid: unknown client, a client document that was refused, a redirect URI the client did not register, or (for a redirect URI that is not loopback) a bad PKCE, resource, scope or response type',
  })
  @ApiResponse({
    status: 429,
    type: ErrorResponseDto,
    description: 'rate_limited: more than RATE_LIMIT_SIGN_IN registrations and authorization requests from this address in the window',
  })
  @ApiResponse({
    status: 404,
    type: ErrorResponseDto,
    description: 'oauth_external_issuer: the service trusts OAUTH_ISSUER and issues no tokens',
  })
  async authorize(
    @CurrentOrigin() origin: RequestOrigin,
    @Query() query: Record<string, unknown>,
    @RawHttpExchange() exchange: HttpExchange,
    @Res() _reply: unknown,
  ): Promise<void> {
    await this.limiter.chargeSignIn(origin.address);
    const location = await this.authorization.authorize(this.base(origin), query);
    // No body: the same empty 302 on Express and Fastify.
    exchange.send(302, { Location: location, 'Cache-Control': 'no-store' }, null);
  }

  @Post('token')
  @ApiOperation({
    operationId: 'oauthToken',
    summary: 'Token endpoint: authorization_code (with code_verifier) or refresh_token (rotating)',
  })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody(
    FORM(
      {
        grant_type: { type: 'string', enum: ['authorization_code', 'refresh_token'] },
        client_id: { type: 'string' },
        code: { type: 'string' },
        code_verifier: { type: 'string' },
        redirect_uri: { type: 'string' },
        refresh_token: { type: 'string' },
        resource: { type: 'string', description: 'RFC 8707: when given, the resource consented to' },
      },
      ['grant_type', 'client_id'],
    ),
  )
  @ApiResponse({
    status: 200,
    description: 'An access token (an agent key bound to the project, tools and resource) and a refresh token',
    schema: {
      type: 'object',
      properties: {
        access_token: { type: 'string' },
        token_type: { type: 'string' },
        expires_in: { type: 'integer' },
        refresh_token: { type: 'string' },
        scope: { type: 'string' },
      },
      required: ['access_token', 'token_type', 'expires_in'],
    },
  })
  @ApiResponse({
    status: 400,
    schema: OAUTH_ERROR,
    description:
      'invalid_request, invalid_grant (a code used twice revokes what it issued; a code or refresh token minted under another issuer URL is refused and left usable there), unsupported_grant_type, invalid_target',
  })
  @ApiResponse({
    status: 429,
    type: ErrorResponseDto,
    description:
      'rate_limited: more than RATE_LIMIT_SIGN_IN token requests from this address in the window (a count apart from registrations)',
  })
  @ApiResponse({ status: 404, schema: OAUTH_ERROR, description: 'oauth_external_issuer' })
  async token(
    @CurrentOrigin() origin: RequestOrigin,
    @Body() body: Record<string, unknown>,
    @RawHttpExchange() exchange: HttpExchange,
    @Res() _reply: unknown,
  ): Promise<void> {
    await this.limiter.chargeTokenRequest(origin.address);
    await answer(exchange, 200, () => this.tokens.token(this.base(origin), body ?? {}));
  }

  @Post('register')
  @ApiOperation({
    operationId: 'oauthRegister',
    summary: 'Dynamic client registration (RFC 7591): public clients (token_endpoint_auth_method none)',
  })
  @ApiBody({
    schema: {
      type: 'object',
      properties: {
        client_name: { type: 'string' },
        redirect_uris: { type: 'array', items: { type: 'string' } },
        application_type: {
          type: 'string',
          enum: ['web', 'native'],
          description: 'web: https redirect URIs off this machine only; native: loopback or private-use schemes only',
        },
      },
      required: ['redirect_uris'],
      additionalProperties: true,
    },
  })
  @ApiResponse({
    status: 201,
    description: 'The client as registered, with its client_id',
    schema: { type: 'object', properties: { client_id: { type: 'string' } }, required: ['client_id'], additionalProperties: true },
  })
  @ApiResponse({
    status: 400,
    schema: OAUTH_ERROR,
    description: 'invalid_redirect_uri (also a redirect URI that does not fit application_type) or invalid_client_metadata',
  })
  @ApiResponse({
    status: 429,
    type: ErrorResponseDto,
    description: 'rate_limited: more than RATE_LIMIT_SIGN_IN registrations and authorization requests from this address in the window',
  })
  @ApiResponse({ status: 404, schema: OAUTH_ERROR, description: 'oauth_external_issuer' })
  async register(
    @CurrentOrigin() origin: RequestOrigin,
    @Body() body: unknown,
    @RawHttpExchange() exchange: HttpExchange,
    @Res() _reply: unknown,
  ): Promise<void> {
    await this.limiter.chargeSignIn(origin.address);
    await answer(exchange, 201, () => this.tokens.register(body));
  }

  @Post('revoke')
  @ApiOperation({ operationId: 'oauthRevoke', summary: 'Token revocation (RFC 7009): an access or refresh token ends its whole grant' })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody(FORM({ token: { type: 'string' }, token_type_hint: { type: 'string' }, client_id: { type: 'string' } }, ['token']))
  @ApiResponse({ status: 200, description: 'Revoked, or not a token of this service (the answer is the same)', schema: { type: 'object' } })
  @ApiResponse({ status: 400, schema: OAUTH_ERROR, description: 'invalid_request: no token' })
  @ApiResponse({ status: 404, schema: OAUTH_ERROR, description: 'oauth_external_issuer' })
  async revoke(@Body() body: Record<string, unknown>, @RawHttpExchange() exchange: HttpExchange, @Res() _reply: unknown): Promise<void> {
    await answer(exchange, 200, async () => {
      await this.tokens.revoke(body ?? {});
      return {};
    });
  }

  private base(origin: RequestOrigin): string {
    return serviceBaseUrl(this.config.oauth.publicUrl, origin.headers, origin.protocol);
  }
}

async function answer(exchange: HttpExchange, status: number, work: () => Promise<unknown>): Promise<void> {
  try {
    const body = await work();
    exchange.send(status, NO_STORE, Buffer.from(JSON.stringify(body)));
  } catch (error) {
    if (error instanceof OAuthProtocolError) {
      exchange.send(error.status, NO_STORE, Buffer.from(JSON.stringify(error.toJSON())));
      return;
    }
    if (error instanceof Error && 'code' in error && error.code === 'oauth_external_issuer') {
      exchange.send(404, NO_STORE, Buffer.from(JSON.stringify({ error: 'oauth_external_issuer', error_description: error.message })));
      return;
    }
    throw error;
  }
}
