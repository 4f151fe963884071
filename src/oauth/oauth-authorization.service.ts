import { randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Tenant } from '../common/auth/auth.decorators.js';
import { mcpResourceOf, mcpResourceOfUrl, serviceBaseOf } from '../common/auth/oauth-resource.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ProjectsRepository } from '../projects/projects.repository.js';
import { ApiKeysService } from '../tenants/api-keys.service.js';
import { hashApiKey } from '../tenants/api-key-format.js';
import { ClientMetadataDocuments, isLoopbackUri, type OAuthClientInfo, redirectUriRegistered } from './client-metadata.js';
import type { OAuthDecisionDto, OAuthDecisionResponseDto, OAuthRequestViewDto } from './dto/oauth.dto.js';
import {
  authorizationRefused,
  externalIssuerOnly,
  OAuthProtocolError,
  oauthRequestDecided,
  oauthRequestExpired,
  oauthRequestNotFound,
  tooManyConsents,
} from './oauth.errors.js';
import { ALREADY_DECIDED, MAX_LIVE_CONSENTS, OAuthRepository, TOO_MANY_CONSENTS } from './oauth.repository.js';

export const OAUTH_SCOPES = ['mcp'];
// A person has this long to decide; a code this long to be exchanged.
const REQUEST_TTL_MS = 10 * 60_000;
export const CODE_TTL_MS = 60_000;
// How long a consent lasts when the person did not say.
export const DEFAULT_CONSENT_MS = 30 * 86_400_000;
const PKCE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

type Params = Record<string, unknown>;

// The authorization endpoint and the consent behind it, after ORY Hydra's login/consent-app pattern: the
// endpoint checks everything it can (client, redirect URI, PKCE S256, resource) and hands the browser to the
// console's consent page with a request id; the person signed in there decides with their own key, and the
// decision answers where to send the browser back (with a code, or access_denied).
@Injectable()
export class OAuthAuthorizationService {
  private readonly external: boolean;

  constructor(
    private readonly requests: OAuthRepository,
    private readonly documents: ClientMetadataDocuments,
    private readonly projects: ProjectsRepository,
    private readonly keys: ApiKeysService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.external = config.oauth.issuer !== null;
  }

  // Answers where to send the browser: the consent page, or back to the client with an error.
  async authorize(base: string, query: Params): Promise<string> {
    if (this.external) throw externalIssuerOnly();
    const clientId = single(query, 'client_id');
    const redirectUri = single(query, 'redirect_uri');
    if (clientId === undefined) throw authorizationRefused('client_id is required');
    const client = await this.client(clientId);
    if (redirectUri === undefined || !redirectUriRegistered(client.redirectUris, redirectUri)) {
      throw authorizationRefused(
        `redirect_uri ${redirectUri === undefined ? '(missing)' : JSON.stringify(redirectUri.slice(0, 200))} is not one the client registered`,
      );
    }
    // From here on the client is known and its redirect URI its own. Errors go back to it (RFC 6749 4.1.2.1)
    // only when that URI is a loopback one (a native client on the person's own machine): anyone may register
    // a client with any https redirect URI, so sending the browser there on an error would make this service
    // an open redirector (RFC 9700 4.11.2). Others are shown the error here.
    const state = single(query, 'state');
    try {
      const request = this.checkRequest(base, query);
      const id = randomUUID();
      await this.requests.createRequest({
        id,
        clientId,
        clientName: client.name,
        clientOrigin: client.verifiedOrigin,
        redirectUri,
        state: state ?? null,
        ...request,
        expiresAt: new Date(Date.now() + REQUEST_TTL_MS),
      });
      return `${base}/console/oauth/consent?request=${id}`;
    } catch (error) {
      if (!(error instanceof OAuthProtocolError)) throw error;
      if (!isLoopbackUri(redirectUri)) throw authorizationRefused(`${error.error}: ${error.description}`);
      return withParams(redirectUri, { error: error.error, error_description: error.description, state, iss: base });
    }
  }

  private async client(clientId: string): Promise<OAuthClientInfo> {
    try {
      if (ClientMetadataDocuments.isDocumentUrl(clientId)) return await this.documents.fetch(clientId);
    } catch (error) {
      if (error instanceof OAuthProtocolError) throw authorizationRefused(error.description);
      throw error;
    }
    const registered = await this.requests.findClient(clientId);
    if (!registered)
      throw authorizationRefused(
        `client_id ${JSON.stringify(clientId.slice(0, 200))} is not registered here and is not a client ID metadata document URL`,
      );
    return { clientId, name: registered.name, redirectUris: registered.redirectUris, verifiedOrigin: null };
  }

  private checkRequest(base: string, query: Params) {
    const fail = (error: string, description: string) => new OAuthProtocolError(400, error, description);
    if (single(query, 'response_type') !== 'code') throw fail('unsupported_response_type', 'response_type must be code');
    const codeChallenge = single(query, 'code_challenge');
    if (single(query, 'code_challenge_method') !== 'S256' || codeChallenge === undefined || !PKCE_CHALLENGE.test(codeChallenge)) {
      throw fail('invalid_request', 'PKCE is required: code_challenge (43 base64url characters) with code_challenge_method=S256');
    }
    const resource = single(query, 'resource');
    const endpoint = resource === undefined ? null : mcpResourceOf(base, resource);
    if (resource === undefined || endpoint === null) {
      throw fail(
        'invalid_target',
        `resource must be the MCP URL of one of this service's projects, ${base}/v1/projects/{projectId}/mcp, or of one of their toolsets, ${base}/v1/projects/{projectId}/toolsets/{slug}/mcp`,
      );
    }
    const projectId = endpoint.projectId;
    const scopes = (single(query, 'scope') ?? OAUTH_SCOPES.join(' ')).split(' ').filter(Boolean);
    const unknown = scopes.filter((scope) => !OAUTH_SCOPES.includes(scope));
    if (unknown.length > 0) throw fail('invalid_scope', `unknown scope ${unknown.join(' ')}; this service knows ${OAUTH_SCOPES.join(' ')}`);
    return { codeChallenge, resource, projectId, scope: scopes.join(' ') || OAUTH_SCOPES.join(' ') };
  }

  // What the consent page shows; another tenant's request, or one for a project the key is not bound to,
  // answers like a missing one.
  async view(tenant: Tenant, requestId: string): Promise<OAuthRequestViewDto> {
    const { request, project, toolset } = await this.pending(tenant, requestId);
    return {
      id: request.id,
      client: { id: request.clientId, name: request.clientName, verifiedOrigin: request.clientOrigin },
      redirectUri: request.redirectUri,
      resource: request.resource,
      project: { id: project.id, name: project.name, slug: project.slug },
      toolset,
      scopes: request.scope.split(' '),
      expiresAt: request.expiresAt.toISOString(),
      callsNeedApproval: tenant.role !== 'admin',
    };
  }

  async decide(tenant: Tenant, requestId: string, decision: OAuthDecisionDto): Promise<OAuthDecisionResponseDto> {
    const { request } = await this.pending(tenant, requestId);
    const iss = serviceBaseOf(request.resource);
    if (!decision.approve) {
      if (!(await this.requests.markDecided(request.id, new Date()))) throw oauthRequestDecided(requestId);
      return {
        redirectTo: withParams(request.redirectUri, {
          error: 'access_denied',
          error_description: 'The person signed in refused the request',
          state: request.state ?? undefined,
          iss,
        }),
      };
    }
    const grant = await this.requests.approve(request.id, new Date(), {
      tenantId: tenant.tenantId,
      projectId: request.projectId,
      clientId: request.clientId,
      clientName: request.clientName,
      resource: request.resource,
      scope: request.scope,
      tools: [...new Set(decision.tools ?? [])],
      decidedByKeyId: tenant.apiKeyId,
      decidedByRole: tenant.role,
      expiresAt: consentEnds(decision.expiresIn, tenant.expiresAt),
    });
    if (grant === ALREADY_DECIDED) throw oauthRequestDecided(requestId);
    if (grant === TOO_MANY_CONSENTS) throw tooManyConsents(MAX_LIVE_CONSENTS);
    if (grant === false) throw oauthRequestNotFound(requestId);
    const code = `tgc_${randomBytes(32).toString('hex')}`;
    await this.requests.attachCode(request.id, new Uint8Array(hashApiKey(code)), grant.id);
    return { redirectTo: withParams(request.redirectUri, { code, state: request.state ?? undefined, iss }) };
  }

  private async pending(tenant: Tenant, requestId: string) {
    const request = await this.requests.findRequest(requestId);
    const bound = tenant.projectIds === null || (request !== null && tenant.projectIds.includes(request.projectId));
    const project = request === null || !bound ? null : await this.projects.findById(tenant.tenantId, request.projectId);
    if (request === null || project === null) throw oauthRequestNotFound(requestId);
    // A toolset's MCP URL: the toolset must be the project's, or the request answers like a missing one.
    const toolset = mcpResourceOfUrl(request.resource)?.toolset ?? null;
    if (toolset !== null && !(await this.keys.toolsetExists(tenant.tenantId, project.id, toolset))) throw oauthRequestNotFound(requestId);
    if (request.decidedAt !== null) throw oauthRequestDecided(requestId);
    if (request.expiresAt.getTime() <= Date.now()) throw oauthRequestExpired(requestId);
    return { request, project, toolset };
  }
}

// A consent is the deciding person's own authority lent to a client: it lasts what they chose (30 days when
// they did not say) and never past their key's own expiry. Revoking their key ends it too (ApiKeysService).
function consentEnds(expiresInSeconds: number | undefined, deciderExpiresAt: Date | null): Date {
  const chosen = Date.now() + (expiresInSeconds === undefined ? DEFAULT_CONSENT_MS : expiresInSeconds * 1000);
  return new Date(deciderExpiresAt === null ? chosen : Math.min(chosen, deciderExpiresAt.getTime()));
}

// One value of a query parameter; a repeated one is refused as missing (RFC 6749 3.1).
export function single(params: Params, name: string): string | undefined {
  const value = params[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function withParams(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.href;
}
