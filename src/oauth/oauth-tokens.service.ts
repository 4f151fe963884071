import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { mcpResourceOfUrl, serviceBaseOf } from '../common/auth/oauth-resource.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { hashApiKey, hashesEqual } from '../tenants/api-key-format.js';
import { ApiKeysService } from '../tenants/api-keys.service.js';
import type { OAuthGrant } from '../generated/prisma/client.js';
import { checkApplicationType, checkRedirectUris, clientName } from './client-metadata.js';
import { CODE_TTL_MS, OAUTH_SCOPES, single } from './oauth-authorization.service.js';
import {
  externalIssuerOnly,
  invalidClientMetadata,
  invalidGrantError,
  invalidRequest,
  invalidTarget,
  unsupportedGrantType,
} from './oauth.errors.js';
import { OAuthRepository } from './oauth.repository.js';
import { deleteInBatches } from '../common/database/delete-in-batches.js';

type Params = Record<string, unknown>;

const PKCE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

// The token, registration and revocation endpoints. Clients are public (PKCE instead of a secret). An access
// token is an agent key (api_keys) bound to the grant's project, tools and resource, so it is listed beside
// the keys, revoked there, and stops open MCP requests when revoked like any key. Refresh tokens rotate: each
// works once, and one presented again revokes its grant (RFC 9700 4.14.2), as does a code used twice.
@Injectable()
export class OAuthTokensService {
  private readonly logger = new Logger('OAuth');
  private readonly accessTtlMs: number;
  private readonly refreshTtlMs: number;
  private readonly external: boolean;
  private readonly appSchemes: readonly string[];
  private readonly maxUnusedClients: number;
  // Registrations made by this instance since it started (forgetUnusedClients).
  private registeredHere = 0;

  constructor(
    private readonly oauth: OAuthRepository,
    private readonly keys: ApiKeysService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.accessTtlMs = config.oauth.accessTokenTtlMs;
    this.refreshTtlMs = config.oauth.refreshTokenTtlMs;
    this.external = config.oauth.issuer !== null;
    this.appSchemes = config.oauth.appSchemes;
    this.maxUnusedClients = config.oauth.maxUnusedClients;
  }

  async register(body: unknown): Promise<Record<string, unknown>> {
    if (this.external) throw externalIssuerOnly();
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw invalidClientMetadata('the body must be a JSON object of client metadata');
    const metadata = body as Record<string, unknown>;
    const redirectUris = checkRedirectUris(metadata.redirect_uris, this.appSchemes, null);
    const applicationType = checkApplicationType(metadata.application_type, redirectUris);
    const grantTypes = metadata.grant_types ?? ['authorization_code', 'refresh_token'];
    if (!Array.isArray(grantTypes) || grantTypes.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
      throw invalidClientMetadata('grant_types may hold only authorization_code and refresh_token');
    }
    const responseTypes = metadata.response_types ?? ['code'];
    if (!Array.isArray(responseTypes) || responseTypes.some((r) => r !== 'code'))
      throw invalidClientMetadata('response_types may hold only code');
    const id = `tgc_${randomBytes(16).toString('hex')}`;
    const name = clientName(metadata.client_name, new URL(redirectUris[0]).host || 'an unnamed client');
    await this.oauth.createClient(id, name, redirectUris);
    await this.forgetUnusedClients();
    // Public clients only: whatever method was asked for, the answer says none (RFC 7591 3.2.1 lets the server choose).
    return {
      client_id: id,
      client_id_issued_at: Math.floor(Date.now() / 1000),
      client_name: name,
      redirect_uris: redirectUris,
      ...(applicationType !== undefined ? { application_type: applicationType } : {}),
      grant_types: grantTypes,
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: OAUTH_SCOPES.join(' '),
    };
  }

  // Every fiftieth of OAUTH_MAX_UNUSED_CLIENTS registrations here, the unused registrations past it are
  // forgotten, oldest first. Registrations are limited per address only (RATE_LIMIT_SIGN_IN): from ever new
  // addresses, an outsider registered 412 clients of 20 KB a second, all kept a day.
  private async forgetUnusedClients(): Promise<void> {
    this.registeredHere++;
    if (this.registeredHere % Math.max(1, Math.floor(this.maxUnusedClients / 50)) !== 0) return;
    await deleteInBatches(this.logger, 'unused client registrations', (limit) =>
      this.oauth.deleteUnusedClientsBeyond(this.maxUnusedClients, limit),
    );
  }

  // `issuer`: this service's base URL as the request reached it (PUBLIC_URL, else its Host), the issuer the
  // token endpoint speaks for; a code or refresh token minted under another is refused.
  async token(issuer: string, params: Params): Promise<TokenAnswer> {
    if (this.external) throw externalIssuerOnly();
    const grantType = single(params, 'grant_type');
    if (grantType === 'authorization_code') return this.exchangeCode(issuer, params);
    if (grantType === 'refresh_token') return this.refresh(issuer, params);
    throw grantType === undefined ? invalidRequest('grant_type is required') : unsupportedGrantType(grantType);
  }

  private async exchangeCode(issuer: string, params: Params): Promise<TokenAnswer> {
    const code = required(params, 'code');
    const verifier = required(params, 'code_verifier');
    if (!PKCE_VERIFIER.test(verifier))
      throw invalidRequest('code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_" and "~" (RFC 7636 4.1)');
    const clientId = required(params, 'client_id');
    const request = await this.oauth.findRequestByCode(new Uint8Array(hashApiKey(code)));
    if (request === null || request.grantId === null || request.decidedAt === null)
      throw invalidGrantError('The authorization code is not valid');
    const grant = await this.oauth.findGrant(request.grantId);
    if (grant === null) throw invalidGrantError('The authorization code is not valid');
    // Before the code is spent: presented to another issuer, it is refused and left for its own.
    checkIssuer(issuer, grant, 'authorization code');
    // A code presented twice was stolen or replayed: whatever was issued from it is revoked (RFC 6749 4.1.2).
    if (!(await this.oauth.spendCode(request.id, new Date()))) {
      await this.keys.revokeOAuthGrant(grant.tenantId, grant.id);
      this.logger.warn(`authorization code used twice: revoked the grant ${grant.id} of client ${grant.clientName}`);
      throw invalidGrantError('The authorization code was already used; the tokens issued from it are revoked');
    }
    if (request.decidedAt.getTime() + CODE_TTL_MS <= Date.now()) throw invalidGrantError('The authorization code expired');
    if (clientId !== request.clientId) throw invalidGrantError('The authorization code was issued to another client');
    if (single(params, 'redirect_uri') !== request.redirectUri)
      throw invalidGrantError('redirect_uri must be the one of the authorization request');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    if (!hashesEqual(Buffer.from(challenge), Buffer.from(request.codeChallenge)))
      throw invalidGrantError('code_verifier does not match the code_challenge (PKCE)');
    this.checkResource(params, grant);
    return this.issue(grant);
  }

  private async refresh(issuer: string, params: Params): Promise<TokenAnswer> {
    const token = required(params, 'refresh_token');
    const clientId = required(params, 'client_id');
    const found = await this.oauth.findRefreshToken(new Uint8Array(hashApiKey(token)));
    if (found === null || found.grant.clientId !== clientId) throw invalidGrantError('The refresh token is not valid');
    checkIssuer(issuer, found.grant, 'refresh token');
    // Another resource is refused before the token is spent, so the client can send it again as it should be
    // (spent, the token sent again would read as replay and revoke the grant). A spent one is replay whatever it names.
    if (found.usedAt === null) this.checkResource(params, found.grant);
    if (!(await this.oauth.spendRefreshToken(found.id, new Date()))) {
      await this.keys.revokeOAuthGrant(found.grant.tenantId, found.grant.id);
      this.logger.warn(`refresh token used twice: revoked the grant ${found.grant.id} of client ${found.grant.clientName}`);
      throw invalidGrantError('The refresh token was already used; the grant is revoked');
    }
    if (found.expiresAt.getTime() <= Date.now()) throw invalidGrantError('The refresh token expired');
    return this.issue(found.grant);
  }

  // RFC 8707: a token request may name the resource again; it must be the one consented to.
  private checkResource(params: Params, grant: OAuthGrant): void {
    const resource = single(params, 'resource');
    if (resource !== undefined && resource !== grant.resource) throw invalidTarget(`This grant is for ${grant.resource} only`);
  }

  private async issue(grant: OAuthGrant): Promise<TokenAnswer> {
    const now = Date.now();
    // Read again: a grant revoked meanwhile issues nothing.
    const current = await this.oauth.findGrant(grant.id);
    if (current === null || current.revokedAt !== null) throw invalidGrantError('The grant was revoked');
    const ends = current.expiresAt?.getTime() ?? Infinity;
    if (ends <= now) throw invalidGrantError('The consent behind this grant expired');
    // A consent for a toolset's MCP URL binds its tokens to that toolset; one deleted since ends the consent
    // (deleting it revokes the grant too: this covers a deletion racing this refresh).
    const toolset = mcpResourceOfUrl(current.resource)?.toolset ?? null;
    if (toolset !== null && !(await this.keys.toolsetExists(current.tenantId, current.projectId, toolset))) {
      await this.keys.revokeOAuthGrant(current.tenantId, current.id);
      throw invalidGrantError(`The toolset ${toolset} this consent was for no longer exists`);
    }
    const accessEnds = new Date(Math.min(now + this.accessTtlMs, ends));
    const key = await this.keys.issue(current.tenantId, `${current.clientName} (OAuth)`, {
      role: 'agent',
      projectIds: [current.projectId],
      tools: current.tools,
      expiresAt: accessEnds,
      toolset,
      oauthGrantId: current.id,
      oauthResource: current.resource,
      // An approver may decide calls, never make them: what it lends a client is calls that each wait for
      // another person's approval (and it cannot decide them itself, see ApprovalsService).
      parksEveryCall: current.decidedByRole !== 'admin',
    });
    await this.keys.retireOAuthAccessTokens(current.tenantId, current.id, key.id);
    const refreshEnds = Math.min(now + this.refreshTtlMs, ends);
    let refreshToken: string | undefined;
    if (refreshEnds > accessEnds.getTime()) {
      refreshToken = `tgr_${randomBytes(32).toString('hex')}`;
      await this.oauth.createRefreshToken(current.id, new Uint8Array(hashApiKey(refreshToken)), new Date(refreshEnds));
    }
    return {
      access_token: key.key,
      token_type: 'Bearer',
      expires_in: Math.floor((accessEnds.getTime() - now) / 1000),
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
      scope: current.scope,
    };
  }

  // RFC 7009: the answer is the same whether or not the token was known.
  async revoke(params: Params): Promise<void> {
    if (this.external) throw externalIssuerOnly();
    const token = required(params, 'token');
    const clientId = single(params, 'client_id');
    const hash = hashApiKey(token);
    const refresh = await this.oauth.findRefreshToken(new Uint8Array(hash));
    if (refresh !== null) {
      if (clientId === undefined || refresh.grant.clientId === clientId)
        await this.keys.revokeOAuthGrant(refresh.grant.tenantId, refresh.grant.id);
      return;
    }
    const key = await this.keys.authenticate(token, hash);
    if (key === null || 'expiredAt' in key || !key.oauthResource) return;
    const row = await this.oauth.findAccessTokenGrant(key.apiKeyId);
    if (row?.oauthGrantId == null) return;
    const grant = await this.oauth.findGrant(row.oauthGrantId);
    if (grant !== null && (clientId === undefined || grant.clientId === clientId))
      await this.keys.revokeOAuthGrant(grant.tenantId, grant.id);
  }
}

// Every credential is bound to the issuer that minted it (the authorization server's base URL, which its
// grant's resource starts with): one presented under another base URL (another PUBLIC_URL or Host) is
// refused, so a token of one deployment name is never honoured under another (MCP 2026-07-28, RFC 9207's
// mix-up defence carried to the token endpoint).
function checkIssuer(issuer: string, grant: OAuthGrant, what: string): void {
  const minted = serviceBaseOf(grant.resource);
  if (minted !== issuer)
    throw invalidGrantError(`This ${what} was issued by ${minted}, not by this issuer (${issuer}); sign in again with ${issuer}`);
}

function required(params: Params, name: string): string {
  const value = single(params, name);
  if (value === undefined) throw invalidRequest(`${name} is required`);
  return value;
}
