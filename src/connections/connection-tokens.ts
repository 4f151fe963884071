import { Injectable } from '@nestjs/common';
import * as oauth from 'openid-client';
import { AuthorizationRequired } from '../execution/authorization-required.js';
import { ToolError } from '../execution/tool-error.js';
import { AuthProvidersRepository, type ProviderRecord } from './auth-providers.repository.js';
import { AuthProvidersService } from './auth-providers.service.js';
import { type ConnectionRecord, ConnectionsRepository } from './connections.repository.js';
import { ConnectionsService, credentialsOf, describe } from './connections.service.js';

// A token is refreshed when it has less than this left, so a call does not start with one about to expire.
const REFRESH_MARGIN_MS = 60_000;
const LEASE_WAIT_MS = 10_000;
// A connection's lastUsedAt is written at most this often: a relayed read or a batch of calls looks the
// connection up several times, and each would otherwise be a write.
const TOUCH_EVERY_MS = 60_000;
const LEASE_POLL_MS = 100;
// Asked without making a link, and no usable connection there.
export const NOT_CONNECTED = 'not_connected';

export interface ConnectionAuth {
  provider: string;
  scopes?: string[];
  as?: 'user' | 'tenant';
}

export interface Bearer {
  token: string;
  // The hosts the token may be sent to (the provider's apiHosts).
  apiHosts: readonly string[];
}

// The access token a tool call uses at a provider, for its end user (or the tenant): the person's active
// connection, refreshed before it expires (or once after the API refused it), one refresh at a time per
// connection on every instance. Missing, expired, revoked or short of a scope: AuthorizationRequired with a
// fresh link for that person.
@Injectable()
export class ConnectionTokens {
  private readonly refreshing = new Map<string, Promise<string>>();

  constructor(
    private readonly providers: AuthProvidersRepository,
    private readonly connections: ConnectionsRepository,
    private readonly links: ConnectionsService,
    private readonly service: AuthProvidersService,
  ) {}

  // `stale`: the token the API just refused; a newer one is answered, refreshed if need be.
  // `tenantLink`: whether a missing tenant connection may be answered with a link to make it. Only an admin's
  // request (a source's registration or review) may: a link for the tenant's own connection, opened by
  // whoever holds it, would put that person's account behind every user's calls.
  // `link`: false where nobody asked to act (listing an MCP source's resources): NOT_CONNECTED, no link made.
  async bearerFor(
    tenantId: string,
    auth: ConnectionAuth,
    user: string | null,
    stale?: string,
    tenantLink = false,
    link = true,
  ): Promise<Bearer> {
    const provider = await this.providers.findBySlug(tenantId, auth.provider);
    if (!provider)
      throw new ToolError('auth_provider_not_found', `The tool names the auth provider '${auth.provider}', which the tenant does not have`);
    const scopes = auth.scopes ?? [];
    const connection = await this.connections.findCurrent(tenantId, provider.id, user);
    if (!connection || connection.status !== 'active' || connection.accessToken === null) {
      return this.required(
        tenantId,
        provider,
        user,
        scopes,
        connection ? 'its connection expired or was revoked' : 'no connection yet',
        tenantLink,
        link,
      );
    }
    const missing = scopes.filter((scope) => !connection.scopes.includes(scope));
    if (missing.length > 0)
      return this.required(tenantId, provider, user, scopes, `the connection lacks the scopes ${missing.join(' ')}`, tenantLink, link);
    let token = connection.accessToken;
    const expiring = connection.tokenExpiresAt !== null && connection.tokenExpiresAt.getTime() - Date.now() < REFRESH_MARGIN_MS;
    if (expiring || (stale !== undefined && stale === token)) {
      const refreshed = await this.refreshOnce(provider, connection);
      if (refreshed === null)
        return this.required(tenantId, provider, user, scopes, 'the provider refused to refresh its token', tenantLink, link);
      token = refreshed;
    }
    if (connection.lastUsedAt === null || Date.now() - connection.lastUsedAt.getTime() >= TOUCH_EVERY_MS)
      void this.connections.touch(connection.id).catch(() => undefined);
    return { token, apiHosts: provider.apiHosts };
  }

  private async required(
    tenantId: string,
    provider: ProviderRecord,
    user: string | null,
    scopes: string[],
    why: string,
    tenantLink: boolean,
    makeLink: boolean,
  ): Promise<never> {
    if (!makeLink) throw new ToolError(NOT_CONNECTED, `No usable connection at '${provider.slug}' (${why})`, false);
    if (user === null && !tenantLink) {
      throw new ToolError(
        'tenant_connection_required',
        `This tool acts with the tenant's own connection at '${provider.slug}' (${why}); an admin makes it on the console's Connections page (or POST /v1/connections/authorize with no user), then call again`,
      );
    }
    const link = await this.links.link(tenantId, { provider, user, scopes });
    const reason = `Authorization required at '${provider.slug}'${user === null ? ' for the tenant' : ` for user '${user}'`}: ${why}`;
    throw new AuthorizationRequired(
      {
        provider: provider.slug,
        url: link.authorizationUrl,
        scopes: [...new Set([...provider.scopes, ...scopes])],
        expiresAt: link.expiresAt,
      },
      reason,
    );
  }

  // One refresh per connection in this process; across instances, the database lease. Null: refused (the
  // connection is now expired).
  private refreshOnce(provider: ProviderRecord, connection: ConnectionRecord): Promise<string | null> {
    let running = this.refreshing.get(connection.id);
    if (!running) {
      running = this.refresh(provider, connection).finally(() => this.refreshing.delete(connection.id));
      this.refreshing.set(connection.id, running);
    }
    return running.then((token) => (token === '' ? null : token));
  }

  private async refresh(provider: ProviderRecord, connection: ConnectionRecord): Promise<string> {
    if (!(await this.connections.takeRefreshLease(connection.id))) return this.awaitOtherRefresh(connection);
    // The row as it is now, under the lease: a call that read it before another refresh ended would
    // otherwise refresh again, with a refresh token that has since rotated.
    const current = await this.connections.findById(connection.tenantId, connection.id);
    if (current && current.status === 'active' && current.accessToken !== null && current.accessToken !== connection.accessToken) {
      await this.connections.releaseRefreshLease(connection.id);
      return current.accessToken;
    }
    if (current) connection = current;
    if (connection.refreshToken === null) {
      await this.connections.markExpired(connection.id);
      return '';
    }
    try {
      const tokens = await this.service.client.refresh(credentialsOf(provider), connection.refreshToken);
      await this.connections.saveRefreshed(connection.id, tokens);
      return tokens.accessToken;
    } catch (error) {
      // The server said no (invalid_grant…): the person connects again. Anything else (the network) may pass.
      if (error instanceof oauth.ResponseBodyError) {
        await this.connections.markExpired(connection.id);
        return '';
      }
      await this.connections.releaseRefreshLease(connection.id);
      throw new ToolError('auth_provider_unavailable', `The token for '${provider.slug}' could not be refreshed: ${describe(error)}`, true);
    }
  }

  // Another instance holds the lease: its outcome is read back from the row.
  private async awaitOtherRefresh(connection: ConnectionRecord): Promise<string> {
    const deadline = Date.now() + LEASE_WAIT_MS;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
      const now = await this.connections.findById(connection.tenantId, connection.id);
      if (!now || now.status !== 'active' || now.accessToken === null) return '';
      if (now.refreshingUntil === null || now.refreshingUntil.getTime() < Date.now()) return now.accessToken;
    }
    throw new ToolError('auth_provider_unavailable', 'A refresh of the token is taking too long; try again', true);
  }
}
