import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import * as oauth from 'openid-client';
import { checkEndUser } from '../common/auth/end-user.js';
import { AuthProvidersService } from './auth-providers.service.js';
import type { ProviderRecord } from './auth-providers.repository.js';
import { connectionFailed, connectionNotFound, invalidLink, invalidProvider, publicUrlRequired } from './connections.errors.js';
import { type ConnectionRecord, ConnectionsRepository } from './connections.repository.js';
import type { AuthorizationLinkDto, AuthorizeConnectionDto, ConnectionListResponseDto, ConnectionResponseDto, ConnectionStatus, ListConnectionsQueryDto } from './dto/connection.dto.js';
import type { ProviderCredentials } from './provider-client.js';
import { policyRefusal } from './provider-fetch.js';

export const LINK_TTL_MS = 10 * 60_000;

export const credentialsOf = (p: ProviderRecord): ProviderCredentials => ({ metadata: p.metadata, clientId: p.clientId, clientSecret: p.clientSecret });
const hashState = (state: string) => createHash('sha256').update(state).digest();

export interface LinkRequest {
  provider: ProviderRecord;
  user: string | null;
  scopes: string[];
  returnTo?: string;
}

// People's connections: the authorization link (single use, bound to the tenant, the provider and the user,
// valid 10 minutes, PKCE and state), the callback that exchanges the code, the listing (never a token) and
// revocation (at the provider too when it has a revocation endpoint).
@Injectable()
export class ConnectionsService {
  private readonly logger = new Logger('Connections');

  constructor(
    private readonly providers: AuthProvidersService,
    private readonly connections: ConnectionsRepository,
  ) {}

  async authorize(tenantId: string, dto: AuthorizeConnectionDto): Promise<AuthorizationLinkDto> {
    const provider = await this.providers.findBySlug(tenantId, dto.provider);
    const user = dto.user === undefined ? null : checkEndUser(dto.user);
    if (dto.returnTo !== undefined && !isWebUrl(dto.returnTo)) throw invalidProvider('returnTo must be an absolute http or https URL');
    return this.link(tenantId, { provider, user, scopes: dto.scopes ?? [], ...(dto.returnTo !== undefined && { returnTo: dto.returnTo }) });
  }

  async link(tenantId: string, request: LinkRequest): Promise<AuthorizationLinkDto> {
    const redirectUri = this.providers.redirectUri;
    if (redirectUri === null) throw publicUrlRequired();
    const scopes = [...new Set([...request.provider.scopes, ...request.scopes])];
    const state = oauth.randomState();
    const codeVerifier = oauth.randomPKCECodeVerifier();
    const codeChallenge = await oauth.calculatePKCECodeChallenge(codeVerifier);
    const linkExpiresAt = new Date(Date.now() + LINK_TTL_MS);
    const pending = await this.connections.createPending(tenantId, {
      providerId: request.provider.id,
      user: request.user,
      scopes,
      stateHash: hashState(state),
      codeVerifier,
      returnTo: request.returnTo ?? null,
      linkExpiresAt,
    });
    const url = this.providers.client.authorizationUrl(credentialsOf(request.provider), { redirectUri, scopes, state, codeChallenge });
    return { id: pending.id, authorizationUrl: url.href, expiresAt: linkExpiresAt.toISOString() };
  }

  // The provider sent the person's browser back. The link is taken once (whatever happens next); the code is
  // exchanged with the PKCE verifier, the state and the issuer (RFC 9207) checked by openid-client.
  async callback(query: Record<string, unknown>): Promise<{ provider: string; returnTo: string | null }> {
    const redirectUri = this.providers.redirectUri;
    if (redirectUri === null) throw publicUrlRequired();
    const state = typeof query.state === 'string' ? query.state : null;
    if (state === null || state.length > 512) throw invalidLink();
    const pending = await this.connections.consumeLink(hashState(state));
    if (!pending || pending.codeVerifier === null) throw invalidLink();
    const provider = await this.providers.find(pending.tenantId, pending.providerId).catch(() => null);
    if (!provider) throw invalidLink();
    const callbackUrl = new URL(redirectUri);
    for (const [name, value] of Object.entries(query)) if (typeof value === 'string') callbackUrl.searchParams.append(name, value);
    try {
      const tokens = await this.providers.client.exchange(credentialsOf(provider), callbackUrl, { state, codeVerifier: pending.codeVerifier });
      await this.connections.activate(pending, tokens, tokens.scopes ?? pending.scopes);
    } catch (error) {
      await this.connections.markFailed(pending.id);
      const refusal = policyRefusal(error);
      throw connectionFailed(refusal ? refusal.message : describe(error));
    }
    return { provider: provider.name, returnTo: pending.returnTo };
  }

  async list(tenantId: string, query: ListConnectionsQueryDto): Promise<ConnectionListResponseDto> {
    let providerId: string | undefined;
    if (query.provider !== undefined) {
      const provider = await this.providers.findBySlug(tenantId, query.provider).catch(() => null);
      if (!provider) return { items: [] };
      providerId = provider.id;
    }
    const rows = await this.connections.list(tenantId, { ...(providerId && { providerId }), ...(query.user !== undefined && { user: query.user }) });
    return { items: rows.map(shown) };
  }

  // Revoked here at once; at the provider too when it has a revocation endpoint (its failure is logged, not
  // the caller's problem: the tokens are already gone from here).
  async revoke(tenantId: string, id: string): Promise<void> {
    const connection = await this.connections.findById(tenantId, id);
    if (!connection || !(await this.connections.revoke(tenantId, id))) throw connectionNotFound(id);
    const provider = await this.providers.find(tenantId, connection.providerId).catch(() => null);
    if (!provider) return;
    for (const [token, hint] of [
      [connection.refreshToken, 'refresh_token'],
      [connection.accessToken, 'access_token'],
    ] as const) {
      if (token === null) continue;
      await this.providers.client.revoke(credentialsOf(provider), token, hint).catch((error: unknown) => {
        this.logger.warn(`connection ${id}: revocation at ${provider.slug} failed: ${describe(error)}`);
      });
    }
  }
}

function shown(row: ConnectionRecord): ConnectionResponseDto {
  return {
    id: row.id,
    provider: row.provider.slug,
    user: row.user,
    status: statusOf(row),
    scopes: row.scopes,
    createdAt: row.createdAt.toISOString(),
    expiresAt: (row.status === 'pending' ? row.linkExpiresAt : row.tokenExpiresAt)?.toISOString() ?? null,
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  };
}

// A link nobody completed in time is expired; so is an active connection whose token ran out with nothing to refresh it.
function statusOf(row: ConnectionRecord): ConnectionStatus {
  const now = Date.now();
  if (row.status === 'pending' && (row.linkUsedAt !== null || (row.linkExpiresAt?.getTime() ?? 0) <= now)) return 'expired';
  if (row.status === 'active' && row.refreshToken === null && row.tokenExpiresAt !== null && row.tokenExpiresAt.getTime() <= now) return 'expired';
  return row.status as ConnectionStatus;
}

function isWebUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

// openid-client's errors say what failed (a state mismatch, a missing iss, the server's error code); the
// server's own description is its text, cut short.
export function describe(error: unknown): string {
  if (error instanceof oauth.AuthorizationResponseError || error instanceof oauth.ResponseBodyError) {
    return `the provider answered ${error.error}${error.error_description ? `: ${error.error_description.slice(0, 200)}` : ''}`;
  }
  if (error instanceof Error) return error.message.slice(0, 300);
  return 'unknown error';
}
