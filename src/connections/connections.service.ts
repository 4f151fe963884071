import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import * as oauth from 'openid-client';
import type { Tenant } from '../common/auth/auth.decorators.js';
import { checkEndUser, userAssertionNotAllowed } from '../common/auth/end-user.js';
import { decodeCursor, toPage } from '../common/pagination/cursor.js';
import { AuthProvidersService, endpointsMixedUp, isWebUrl } from './auth-providers.service.js';
import type { ProviderRecord } from './auth-providers.repository.js';
import {
  connectionFailed,
  connectionNotFound,
  connectionUserMismatch,
  invalidFlow,
  invalidLink,
  invalidProvider,
  linksExceeded,
  publicUrlRequired,
  tooManyConnections,
} from './connections.errors.js';
import { type ConnectionRecord, ConnectionsRepository, TOO_MANY_WAITING, TOO_MANY_CONNECTIONS } from './connections.repository.js';
import { ENDED_RETENTION_DAYS } from './connections.sweeper.js';
import type {
  AuthorizationLinkDto,
  AuthorizeConnectionDto,
  ConnectionListResponseDto,
  ConnectionResponseDto,
  ConnectionStatus,
  ListConnectionsQueryDto,
  VerifiedConnectionDto,
  VerifyConnectionDto,
} from './dto/connection.dto.js';
import type { ProviderCredentials } from './provider-client.js';
import { policyRefusal } from './provider-fetch.js';

export const LINK_TTL_MS = 10 * 60_000;
// Links a tenant may have waiting at once: each call that needs a person's connection makes one (a row with
// a sealed PKCE verifier), and an agent naming a new end user on every call would otherwise make one each.
export const LINKS_WAITING_MAX = 1000;
// Connections a tenant may keep, whatever their status: one per person and provider is active, and each row
// may hold about 48 KB (two sealed tokens of up to 16 KiB, 4 KiB of scopes). Far above what a tenant's
// people make, yet it bounds what one tenant adds to the shared database (ended rows go after
// ENDED_RETENTION_DAYS, connections.sweeper.ts).
export const CONNECTIONS_MAX = 10_000;
const DEFAULT_PAGE_SIZE = 20;
// How long the tenant's app has to confirm a flow (POST /v1/connections/verify).
export const FLOW_TTL_MS = 10 * 60_000;

export const credentialsOf = (p: ProviderRecord): ProviderCredentials => ({
  metadata: p.metadata,
  clientId: p.clientId,
  clientSecret: p.clientSecret,
});
const hashState = (state: string) => createHash('sha256').update(state).digest();

export interface CallbackOutcome {
  provider: string;
  returnTo: string | null;
  // With the provider's verifyUrl: where the browser goes now, the one-time flow id in its query.
  verify: string | null;
}

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
    // A provider kept from before the rule (endpointsMixedUp) makes no link until its endpoints are mended.
    const mixUp = endpointsMixedUp(request.provider.metadata, request.provider.discovered);
    if (mixUp) throw invalidProvider(mixUp);
    const scopes = [...new Set([...request.provider.scopes, ...request.scopes])];
    const state = oauth.randomState();
    const codeVerifier = oauth.randomPKCECodeVerifier();
    const codeChallenge = await oauth.calculatePKCECodeChallenge(codeVerifier);
    const linkExpiresAt = new Date(Date.now() + LINK_TTL_MS);
    const pending = await this.connections.createPending(
      tenantId,
      {
        providerId: request.provider.id,
        user: request.user,
        scopes,
        stateHash: hashState(state),
        codeVerifier,
        returnTo: request.returnTo ?? null,
        linkExpiresAt,
      },
      { waiting: LINKS_WAITING_MAX, total: CONNECTIONS_MAX },
    );
    if (pending === TOO_MANY_WAITING) throw linksExceeded(LINKS_WAITING_MAX);
    if (pending === TOO_MANY_CONNECTIONS) throw tooManyConnections(CONNECTIONS_MAX, ENDED_RETENTION_DAYS);
    const url = this.providers.client.authorizationUrl(credentialsOf(request.provider), { redirectUri, scopes, state, codeChallenge });
    return { id: pending.id, authorizationUrl: url.href, expiresAt: linkExpiresAt.toISOString() };
  }

  // The provider sent the person's browser back. The link is taken once (whatever happens next); the code is
  // exchanged with the PKCE verifier, the state and the issuer (RFC 9207) checked by openid-client.
  async callback(query: Record<string, unknown>): Promise<CallbackOutcome> {
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
    // Whoever completed the link is whoever signed in at the provider; with verifyUrl the tenant's app must
    // say that is the link's user before the connection is used (a tenant's own connection is an admin's).
    const verifyUrl = pending.user === null ? null : provider.verifyUrl;
    let verify: string | null = null;
    try {
      const tokens = await this.providers.client.exchange(credentialsOf(provider), callbackUrl, {
        state,
        codeVerifier: pending.codeVerifier,
      });
      if (verifyUrl === null) await this.connections.activate(pending, tokens, tokens.scopes ?? pending.scopes);
      else {
        const flow = oauth.randomState();
        await this.connections.awaitVerification(
          pending,
          tokens,
          tokens.scopes ?? pending.scopes,
          hashState(flow),
          new Date(Date.now() + FLOW_TTL_MS),
        );
        const url = new URL(verifyUrl);
        url.searchParams.set('flow', flow);
        verify = url.href;
      }
    } catch (error) {
      await this.connections.markFailed(pending.id);
      const refusal = policyRefusal(error);
      throw connectionFailed(refusal ? refusal.message : describe(error));
    }
    return { provider: provider.name, returnTo: pending.returnTo, verify };
  }

  // The tenant's app, which knows who is signed in to it, confirms the flow for that user. The flow is taken
  // once whatever the answer: another user's name ends the connection (revoked here and at the provider),
  // so a link completed in someone else's browser never attaches their account.
  async verify(tenant: Tenant, dto: VerifyConnectionDto): Promise<VerifiedConnectionDto> {
    // The app that names its users to Toolgate (a key with actAsUsers) vouches for who is signed in; so may an admin.
    if (tenant.role !== 'admin' && tenant.actAsUsers !== true) throw userAssertionNotAllowed();
    const tenantId = tenant.tenantId;
    const user = checkEndUser(dto.user);
    if (dto.flow.length > 512) throw invalidFlow();
    const pending = await this.connections.takeFlow(tenantId, hashState(dto.flow));
    if (!pending) throw invalidFlow();
    if (pending.user !== user) {
      await this.connections.markFailed(pending.id);
      await this.revokeAtProvider(tenantId, pending);
      throw connectionUserMismatch();
    }
    if (!(await this.connections.activateVerified(pending))) throw invalidFlow();
    const now = await this.connections.findById(tenantId, pending.id);
    if (!now) throw invalidFlow();
    return { ...shown(now), returnTo: pending.returnTo };
  }

  async list(tenantId: string, query: ListConnectionsQueryDto): Promise<ConnectionListResponseDto> {
    // A forged cursor is refused whatever the filters find.
    const after = query.cursor ? decodeCursor(query.cursor) : null;
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    let providerId: string | undefined;
    if (query.provider !== undefined) {
      const provider = await this.providers.findBySlug(tenantId, query.provider).catch(() => null);
      if (!provider) return { items: [], nextCursor: null };
      providerId = provider.id;
    }
    const filter = { ...(providerId && { providerId }), ...(query.user !== undefined && { user: query.user }) };
    return toPage(await this.connections.listPage(tenantId, filter, limit, after), limit, shown);
  }

  // Revoked here at once; at the provider too when it has a revocation endpoint (its failure is logged, not
  // the caller's problem: the tokens are already gone from here).
  async revoke(tenantId: string, id: string): Promise<void> {
    const connection = await this.connections.findById(tenantId, id);
    if (!connection || !(await this.connections.revoke(tenantId, id))) throw connectionNotFound(id);
    await this.revokeAtProvider(tenantId, connection);
  }

  private async revokeAtProvider(tenantId: string, connection: ConnectionRecord): Promise<void> {
    const provider = await this.providers.find(tenantId, connection.providerId).catch(() => null);
    if (!provider) return;
    await this.providers.client.revokeTokens(credentialsOf(provider), connection, (error) => {
      this.logger.warn(`connection ${connection.id}: revocation at ${provider.slug} failed: ${describe(error)}`);
    });
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
    expiresAt:
      (row.status !== 'pending'
        ? row.tokenExpiresAt
        : awaitingVerification(row)
          ? row.verifyExpiresAt
          : row.linkExpiresAt
      )?.toISOString() ?? null,
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  };
}

// A link nobody completed in time is expired; so is an active connection whose token ran out with nothing to refresh it.
function statusOf(row: ConnectionRecord): ConnectionStatus {
  const now = Date.now();
  if (awaitingVerification(row)) return 'pending';
  if (row.status === 'pending' && (row.linkUsedAt !== null || (row.linkExpiresAt?.getTime() ?? 0) <= now)) return 'expired';
  if (row.status === 'active' && row.refreshToken === null && row.tokenExpiresAt !== null && row.tokenExpiresAt.getTime() <= now)
    return 'expired';
  return row.status as ConnectionStatus;
}

// Completed at the provider, its flow not yet confirmed by the tenant's app (nor run out).
const awaitingVerification = (row: ConnectionRecord) =>
  row.status === 'pending' && row.verifyFlowHash !== null && row.verifyExpiresAt !== null && row.verifyExpiresAt.getTime() > Date.now();

// openid-client's errors say what failed (a state mismatch, a missing iss, the server's error code); the
// server's own description is its text, cut short.
export function describe(error: unknown): string {
  if (error instanceof oauth.AuthorizationResponseError || error instanceof oauth.ResponseBodyError) {
    return `the provider answered ${error.error}${error.error_description ? `: ${error.error_description.slice(0, 200)}` : ''}`;
  }
  if (error instanceof Error) return error.message.slice(0, 300);
  return 'unknown error';
}
