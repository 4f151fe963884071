import { Controller, Get, Header, Inject, Param, UseGuards } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/auth/auth.decorators.js';
import { mcpResourceOf, mcpResourceUrl, serviceBaseUrl } from '../common/auth/oauth-resource.js';
import { PROJECT_ID, TOOLSET_SLUG } from '../common/http/api-params.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { projectNotFound } from '../projects/projects.errors.js';
import { toolsetNotFound } from '../toolsets/toolsets.errors.js';
import { isUuid } from '../common/validation/is-uuid.js';
import { OAuthHostGuard } from './oauth-host.guard.js';
import { CurrentOrigin, type RequestOrigin } from './oauth-base-url.js';
import { externalIssuerOnly } from './oauth.errors.js';
import { OAUTH_SCOPES } from './oauth-authorization.service.js';

const OBJECT = { type: 'object', additionalProperties: true } as const;

// Discovery: RFC 9728 protected resource metadata for each project's and toolset's MCP URL (and the root document), and
// RFC 8414 authorization server metadata (also at the OpenID discovery path, where MCP clients look too).
// Public and the same for every caller; a project id or toolset slug is not looked up, so the documents say
// nothing about which projects or toolsets exist.
@ApiTags('oauth')
@Public('OAuth discovery (RFC 9728, RFC 8414): read by clients before they have credentials; the same for every caller')
@UseGuards(OAuthHostGuard)
@ApiResponse({
  status: 403,
  type: ErrorResponseDto,
  description: "host_not_allowed: without PUBLIC_URL, a Host that is not one of the service's names (ALLOWED_HOSTS)",
})
@Controller('.well-known')
export class OAuthWellKnownController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get('oauth-protected-resource/v1/projects/:projectId/mcp')
  @Header('Vary', 'Host')
  @ApiOperation({ operationId: 'getProjectResourceMetadata', summary: "A project MCP URL's protected resource metadata (RFC 9728)" })
  @ApiParam(PROJECT_ID)
  @ApiOkResponse({ schema: OBJECT, description: '{resource, authorization_servers, scopes_supported, bearer_methods_supported}' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'project_not_found: not a project id' })
  projectResource(@CurrentOrigin() origin: RequestOrigin, @Param('projectId') projectId: string): Record<string, unknown> {
    if (!isUuid(projectId)) throw projectNotFound(projectId);
    const base = this.base(origin);
    return this.resourceDocument(base, mcpResourceUrl(base, { projectId, toolset: null }), `Toolgate project ${projectId} (MCP)`);
  }

  @Get('oauth-protected-resource/v1/projects/:projectId/toolsets/:slug/mcp')
  @Header('Vary', 'Host')
  @ApiOperation({ operationId: 'getToolsetResourceMetadata', summary: "A toolset MCP URL's protected resource metadata (RFC 9728)" })
  @ApiParam(PROJECT_ID)
  @ApiParam(TOOLSET_SLUG)
  @ApiOkResponse({ schema: OBJECT, description: '{resource, authorization_servers, scopes_supported, bearer_methods_supported}' })
  @ApiNotFoundResponse({
    type: ErrorResponseDto,
    description: 'project_not_found or toolset_not_found: not a project id or not a toolset slug',
  })
  toolsetResource(
    @CurrentOrigin() origin: RequestOrigin,
    @Param('projectId') projectId: string,
    @Param('slug') slug: string,
  ): Record<string, unknown> {
    if (!isUuid(projectId)) throw projectNotFound(projectId);
    const base = this.base(origin);
    const resource = mcpResourceUrl(base, { projectId, toolset: slug });
    if (mcpResourceOf(base, resource) === null) throw toolsetNotFound(slug);
    return this.resourceDocument(base, resource, `Toolgate toolset ${slug} of project ${projectId} (MCP)`);
  }

  @Get('oauth-protected-resource')
  @Header('Vary', 'Host')
  @ApiOperation({
    operationId: 'getResourceMetadata',
    summary: "The service's protected resource metadata (RFC 9728); each project's MCP URL has its own",
  })
  @ApiOkResponse({ schema: OBJECT, description: '{resource, authorization_servers, scopes_supported, bearer_methods_supported}' })
  rootResource(@CurrentOrigin() origin: RequestOrigin): Record<string, unknown> {
    const base = this.base(origin);
    return this.resourceDocument(base, base, 'Toolgate');
  }

  @Get('oauth-authorization-server')
  @Header('Vary', 'Host')
  @ApiOperation({ operationId: 'getAuthorizationServerMetadata', summary: 'Authorization server metadata (RFC 8414)' })
  @ApiOkResponse({
    schema: OBJECT,
    description:
      'Endpoints and what they support: authorization code with PKCE S256, resource indicators, DCR, client ID metadata documents',
  })
  @ApiNotFoundResponse({
    type: ErrorResponseDto,
    description: 'oauth_external_issuer: the service trusts OAUTH_ISSUER and issues no tokens',
  })
  authorizationServer(@CurrentOrigin() origin: RequestOrigin): Record<string, unknown> {
    return this.serverDocument(this.base(origin));
  }

  // The same document where OpenID clients look for it; not described twice in the API document.
  @Get('openid-configuration')
  @Header('Vary', 'Host')
  @ApiExcludeEndpoint()
  openIdConfiguration(@CurrentOrigin() origin: RequestOrigin): Record<string, unknown> {
    return this.serverDocument(this.base(origin));
  }

  private base(origin: RequestOrigin): string {
    return serviceBaseUrl(this.config.oauth.publicUrl, origin.headers, origin.protocol);
  }

  private resourceDocument(base: string, resource: string, name: string): Record<string, unknown> {
    return {
      resource,
      authorization_servers: [this.config.oauth.issuer ?? base],
      scopes_supported: OAUTH_SCOPES,
      bearer_methods_supported: ['header'],
      resource_name: name,
      resource_documentation: `${base}/docs`,
    };
  }

  private serverDocument(base: string): Record<string, unknown> {
    if (this.config.oauth.issuer !== null) throw externalIssuerOnly();
    return {
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      revocation_endpoint: `${base}/oauth/revoke`,
      scopes_supported: OAUTH_SCOPES,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${base}/docs`,
    };
  }
}
