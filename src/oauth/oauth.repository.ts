import { Injectable } from '@nestjs/common';
import { BudgetsRepository } from '../budgets/budgets.repository.js';
import { PrismaService } from '../database/prisma.service.js';
import { isUuid } from '../common/validation/is-uuid.js';
import type { OAuthGrant, OAuthRefreshToken, OAuthRequest } from '../generated/prisma/client.js';

// Live consents (not revoked, not expired) one tenant may hold. Each holds an access token, a refresh token
// and the token rows its refreshes retire, and lasts up to a year: without a count, a tenant's people (or a
// script with one of its keys) could consent at the sign-in rate for as long as they liked. People who sign
// the same client in again make a consent each time, hence a figure well past the keys'.
export const MAX_LIVE_CONSENTS = 10_000;

// What approve answers when the request was decided meanwhile, or the tenant has its MAX_LIVE_CONSENTS.
export const ALREADY_DECIDED = Symbol('already decided');
export const TOO_MANY_CONSENTS = Symbol('too many consents');

export interface NewOAuthRequest {
  id: string;
  clientId: string;
  clientName: string;
  clientOrigin: string | null;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  resource: string;
  projectId: string;
  scope: string;
  expiresAt: Date;
}

export interface NewOAuthGrant {
  tenantId: string;
  projectId: string;
  clientId: string;
  clientName: string;
  resource: string;
  scope: string;
  tools: string[];
  decidedByKeyId: string;
  decidedByRole: string;
  expiresAt: Date | null;
}

@Injectable()
export class OAuthRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly budgetLocks: BudgetsRepository,
  ) {}

  createClient(id: string, name: string, redirectUris: string[]): Promise<unknown> {
    return this.prisma.oAuthClient.create({ data: { id, name, redirectUris } });
  }

  // Registered clients are forgotten, so the table does not keep every registration ever made (a forgotten
  // client registers again, as MCP clients do): one nobody consented to once it registered before
  // `unusedBefore`, one whose consents have all ended once it registered before `endedBefore`. Nothing
  // stops a registration, so a flood of them cannot stop an honest client registering; the unused ones past
  // OAUTH_MAX_UNUSED_CLIENTS are forgotten as they come (deleteUnusedClientsBeyond). At most `limit`.
  deleteStaleClients(unusedBefore: Date, endedBefore: Date, limit: number): Promise<number> {
    return this.prisma.$executeRaw`DELETE FROM oauth_clients WHERE id IN (
      SELECT c.id FROM oauth_clients c WHERE c.created_at < ${unusedBefore} AND NOT EXISTS (
        SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id
          AND (c.created_at >= ${endedBefore} OR (g.revoked_at IS NULL AND (g.expires_at IS NULL OR g.expires_at > now()))))
      LIMIT ${limit})`;
  }

  // Registered clients that never began an authorization (no request, no consent), past the newest `keep`
  // of them: a flood of registrations from ever new addresses is held to that many rows. A client that began
  // an authorization is never among them. At most `limit`.
  deleteUnusedClientsBeyond(keep: number, limit: number): Promise<number> {
    return this.prisma.$executeRaw`DELETE FROM oauth_clients WHERE id IN (
      SELECT c.id FROM oauth_clients c
      WHERE NOT EXISTS (SELECT 1 FROM oauth_requests r WHERE r.client_id = c.id)
        AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id)
      ORDER BY c.created_at DESC, c.id OFFSET ${keep} LIMIT ${limit})`;
  }

  findClient(id: string) {
    return this.prisma.oAuthClient.findUnique({ where: { id } });
  }

  async createRequest(request: NewOAuthRequest): Promise<void> {
    await this.prisma.oAuthRequest.create({ data: request });
  }

  findRequest(id: string): Promise<OAuthRequest | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.prisma.oAuthRequest.findUnique({ where: { id } });
  }

  // Decides the request once: false when it was already decided (by this or another instance).
  async markDecided(id: string, at: Date): Promise<boolean> {
    const { count } = await this.prisma.oAuthRequest.updateMany({ where: { id, decidedAt: null }, data: { decidedAt: at } });
    return count === 1;
  }

  async attachCode(id: string, codeHash: Uint8Array<ArrayBuffer>, grantId: string): Promise<void> {
    await this.prisma.oAuthRequest.update({ where: { id }, data: { codeHash, grantId } });
  }

  findRequestByCode(codeHash: Uint8Array<ArrayBuffer>): Promise<OAuthRequest | null> {
    return this.prisma.oAuthRequest.findUnique({ where: { codeHash } });
  }

  // Spends the code once: false when it had been used already.
  async spendCode(id: string, at: Date): Promise<boolean> {
    const { count } = await this.prisma.oAuthRequest.updateMany({ where: { id, codeUsedAt: null }, data: { codeUsedAt: at } });
    return count === 1;
  }

  // Decides the request and records the consent under the tenant's row lock, the live consents counted
  // first: two decisions at once, on any instance, cannot both take the last place, and a refused one leaves
  // the request pending. False when there is no such tenant.
  approve(
    requestId: string,
    at: Date,
    grant: NewOAuthGrant,
  ): Promise<OAuthGrant | typeof ALREADY_DECIDED | typeof TOO_MANY_CONSENTS | false> {
    return this.budgetLocks.withTenantLocked(grant.tenantId, async (tx) => {
      const live = await tx.oAuthGrant.count({
        where: { tenantId: grant.tenantId, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: at } }] },
      });
      if (live >= MAX_LIVE_CONSENTS) return TOO_MANY_CONSENTS;
      const { count } = await tx.oAuthRequest.updateMany({ where: { id: requestId, decidedAt: null }, data: { decidedAt: at } });
      if (count !== 1) return ALREADY_DECIDED;
      return tx.oAuthGrant.create({ data: grant });
    });
  }

  // Consents that ended (revoked or expired) before `endedBefore` and whose access tokens are all gone (the
  // keys' sweep deletes them, keeping any whose parked call awaits a decision); their refresh tokens go with
  // them. At most `limit`.
  deleteEndedGrants(endedBefore: Date, limit: number): Promise<number> {
    return this.prisma.$executeRaw`DELETE FROM oauth_grants WHERE id IN (
      SELECT g.id FROM oauth_grants g WHERE least(g.revoked_at, g.expires_at) < ${endedBefore}
        AND NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.oauth_grant_id = g.id)
      LIMIT ${limit})`;
  }

  findGrant(id: string): Promise<OAuthGrant | null> {
    return this.prisma.oAuthGrant.findUnique({ where: { id } });
  }

  async createRefreshToken(grantId: string, tokenHash: Uint8Array<ArrayBuffer>, expiresAt: Date): Promise<void> {
    await this.prisma.oAuthRefreshToken.create({ data: { grantId, tokenHash, expiresAt } });
  }

  findRefreshToken(tokenHash: Uint8Array<ArrayBuffer>): Promise<(OAuthRefreshToken & { grant: OAuthGrant }) | null> {
    return this.prisma.oAuthRefreshToken.findUnique({ where: { tokenHash }, include: { grant: true } });
  }

  // Spends the refresh token once (rotation): false when it had been used already.
  async spendRefreshToken(id: string, at: Date): Promise<boolean> {
    const { count } = await this.prisma.oAuthRefreshToken.updateMany({ where: { id, usedAt: null }, data: { usedAt: at } });
    return count === 1;
  }

  findAccessTokenGrant(apiKeyId: string): Promise<{ oauthGrantId: string | null; tenantId: string } | null> {
    return this.prisma.apiKey.findUnique({ where: { id: apiKeyId }, select: { oauthGrantId: true, tenantId: true } });
  }

  async tenantName(tenantId: string): Promise<string | null> {
    return (await this.prisma.tenant.findUnique({ where: { id: tenantId }, select: { name: true } }))?.name ?? null;
  }

  // Authorization requests (and the hashes of their codes) that expired before `before`. At most `limit`.
  deleteExpiredRequests(before: Date, limit: number): Promise<number> {
    return this.prisma.$executeRaw`DELETE FROM oauth_requests WHERE id IN (
      SELECT id FROM oauth_requests WHERE expires_at < ${before} LIMIT ${limit})`;
  }

  // Refresh tokens used or expired before `before`. At most `limit`.
  deleteSpentRefreshTokens(before: Date, limit: number): Promise<number> {
    return this.prisma.$executeRaw`DELETE FROM oauth_refresh_tokens WHERE id IN (
      SELECT id FROM oauth_refresh_tokens WHERE used_at < ${before} OR expires_at < ${before} LIMIT ${limit})`;
  }
}
