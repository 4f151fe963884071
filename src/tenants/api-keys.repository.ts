import { Injectable } from '@nestjs/common';
import { BudgetsRepository } from '../budgets/budgets.repository.js';
import { PrismaService } from '../database/prisma.service.js';
import { isUuid } from '../common/validation/is-uuid.js';
import { type ApiKey, Prisma } from '../generated/prisma/client.js';
import type { KeyGrant } from './key-grant.js';

// A key as listed: an OAuth access token with the key that consented to its client.
export type ListedApiKey = ApiKey & { oauthGrant?: { decidedByKeyId: string } | null };

// Live API keys (not revoked, not expired) one tenant may hold: each row keeps up to about 17 KB (100
// projects, 100 tool patterns), and without a count a tenant could add them at its request rate for as long
// as it liked. OAuth access tokens are not counted: a client holds one live token per consent, and consents
// have their own count (src/oauth), so a burst of sign-ins never stops a tenant issuing its keys.
export const MAX_LIVE_API_KEYS = 1000;
// Ended keys (revoked or expired) a tenant keeps until the sweep deletes them: issuing a key deletes the
// oldest past this many, so keys issued and revoked in a loop do not pile up for the whole retention period.
export const MAX_ENDED_API_KEYS = 1000;
// Ended access tokens one consent keeps: a refresh retires the token before it, every hour by default.
export const MAX_ENDED_TOKENS_PER_GRANT = 10;

// What createCounted answers when the tenant has its MAX_LIVE_API_KEYS already.
export const TOO_MANY_KEYS = Symbol('too many API keys');

type Db = PrismaService | Prisma.TransactionClient;

// A key that can never authenticate again.
const ENDED = Prisma.sql`(k.revoked_at IS NOT NULL OR k.expires_at <= now())`;
// A call parked by the key and still waiting for a person needs the key's row: the decision checks that
// the key (or the OAuth consent behind it) still holds, and that the decider is neither the key nor the
// person who consented (src/audit/parked-calls.repository.ts, requester). Such a key is never deleted.
const NOT_AWAITED = Prisma.sql`NOT EXISTS (SELECT 1 FROM parked_calls p WHERE p.status = 'pending' AND p.requested_by_key_id = k.id)`;

@Injectable()
export class ApiKeysRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly budgetLocks: BudgetsRepository,
  ) {}

  // An OAuth access token (counted by its consent, not here).
  create(tenantId: string, name: string, prefix: string, keyHash: Buffer, grant: KeyGrant): Promise<ApiKey> {
    return this.prisma.apiKey.create({ data: { tenantId, name, prefix, keyHash: new Uint8Array(keyHash), ...grant } });
  }

  // An API key, counted and created under the tenant's row lock: two creations at once, on any instance,
  // cannot both take the last place. False when there is no such tenant.
  createCounted(
    tenantId: string,
    name: string,
    prefix: string,
    keyHash: Buffer,
    grant: KeyGrant,
  ): Promise<ApiKey | typeof TOO_MANY_KEYS | false> {
    return this.budgetLocks.withTenantLocked(tenantId, async (tx) => {
      const live = await tx.apiKey.count({
        where: { tenantId, oauthGrantId: null, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }] },
      });
      if (live >= MAX_LIVE_API_KEYS) return TOO_MANY_KEYS;
      const created = await tx.apiKey.create({ data: { tenantId, name, prefix, keyHash: new Uint8Array(keyHash), ...grant } });
      await deleteWithState(
        tx,
        Prisma.sql`SELECT k.id FROM api_keys k WHERE k.tenant_id = ${tenantId}::uuid AND k.oauth_grant_id IS NULL AND ${ENDED}
          AND ${NOT_AWAITED} ORDER BY least(k.revoked_at, k.expires_at) DESC, k.id OFFSET ${MAX_ENDED_API_KEYS}`,
      );
      return created;
    });
  }

  // Keys and access tokens that ended before `endedBefore`, at most `limit` of them: answers how many went.
  deleteEndedBefore(endedBefore: Date, limit: number): Promise<number> {
    return deleteWithState(
      this.prisma,
      Prisma.sql`SELECT k.id FROM api_keys k WHERE least(k.revoked_at, k.expires_at) < ${endedBefore} AND ${NOT_AWAITED} LIMIT ${limit}`,
    );
  }

  listForTenant(tenantId: string): Promise<ListedApiKey[]> {
    return this.prisma.apiKey.findMany({
      where: { tenantId, revokedAt: null },
      include: { oauthGrant: { select: { decidedByKeyId: true } } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
  }

  findActiveByPrefix(prefix: string): Promise<ApiKey | null> {
    return this.prisma.apiKey.findFirst({ where: { prefix, revokedAt: null } });
  }

  // Revokes the active keys bound to a project's toolset; answers their ids and prefixes.
  async revokeBoundToToolset(tenantId: string, projectId: string, slug: string): Promise<Array<{ id: string; prefix: string }>> {
    const keys = await this.prisma.apiKey.findMany({
      where: { tenantId, toolset: slug, projectIds: { has: projectId }, revokedAt: null },
      select: { id: true, prefix: true },
    });
    if (keys.length > 0)
      await this.prisma.apiKey.updateMany({
        where: { id: { in: keys.map((k) => k.id) }, revokedAt: null },
        data: { revokedAt: new Date() },
      });
    return keys;
  }

  // Answers the revoked key's prefix and OAuth grant, or null when the tenant has no such active key.
  async revoke(tenantId: string, keyId: string): Promise<{ prefix: string; oauthGrantId: string | null } | null> {
    if (!isUuid(keyId)) return null;
    const key = await this.prisma.apiKey.findFirst({ where: { id: keyId, tenantId, revokedAt: null } });
    if (!key) return null;
    await this.prisma.apiKey.update({ where: { id: key.id }, data: { revokedAt: new Date() } });
    return { prefix: key.prefix, oauthGrantId: key.oauthGrantId };
  }

  // The active OAuth consents a key gave: they end with it.
  async grantsConsentedBy(tenantId: string, keyId: string): Promise<string[]> {
    const grants = await this.prisma.oAuthGrant.findMany({
      where: { tenantId, decidedByKeyId: keyId, revokedAt: null },
      select: { id: true },
    });
    return grants.map((g) => g.id);
  }

  // Marks the grant revoked and revokes its access tokens; answers the keys that were still active.
  async revokeGrant(tenantId: string, grantId: string): Promise<Array<{ id: string; prefix: string }>> {
    const now = new Date();
    // The grant first: no token is issued under a revoked grant, so none appears after the keys are read.
    await this.prisma.oAuthGrant.updateMany({ where: { id: grantId, tenantId, revokedAt: null }, data: { revokedAt: now } });
    const keys = await this.prisma.apiKey.findMany({
      where: { oauthGrantId: grantId, tenantId, revokedAt: null },
      select: { id: true, prefix: true },
    });
    await this.prisma.apiKey.updateMany({ where: { id: { in: keys.map((k) => k.id) } }, data: { revokedAt: now } });
    return keys;
  }

  // Revokes the grant's other active tokens and deletes its ended ones past the newest few; answers those revoked.
  async revokeGrantKeysExcept(tenantId: string, grantId: string, keepKeyId: string): Promise<Array<{ id: string; prefix: string }>> {
    const keys = await this.prisma.apiKey.findMany({
      where: { oauthGrantId: grantId, tenantId, revokedAt: null, id: { not: keepKeyId } },
      select: { id: true, prefix: true },
    });
    await this.prisma.apiKey.updateMany({ where: { id: { in: keys.map((k) => k.id) } }, data: { revokedAt: new Date() } });
    await deleteWithState(
      this.prisma,
      Prisma.sql`SELECT k.id FROM api_keys k WHERE k.oauth_grant_id = ${grantId}::uuid AND k.tenant_id = ${tenantId}::uuid AND ${ENDED}
        AND ${NOT_AWAITED} ORDER BY least(k.revoked_at, k.expires_at) DESC, k.id OFFSET ${MAX_ENDED_TOKENS_PER_GRANT}`,
    );
    return keys;
  }

  // The live OAuth consents given for an MCP URL of the project with this path (whatever origin it was asked under).
  async grantsForResourcePath(tenantId: string, projectId: string, path: string): Promise<string[]> {
    const grants = await this.prisma.oAuthGrant.findMany({
      where: { tenantId, projectId, resource: { endsWith: path }, revokedAt: null },
      select: { id: true },
    });
    return grants.map((grant) => grant.id);
  }

  // Whether the project has a toolset of this slug, for a key bound to it (the project is the tenant's: checked before).
  async toolsetExists(tenantId: string, projectId: string, slug: string): Promise<boolean> {
    return (await this.prisma.toolset.findFirst({ where: { tenantId, projectId, slug }, select: { id: true } })) !== null;
  }

  async touchLastUsed(keyId: string, at: Date): Promise<void> {
    await this.prisma.apiKey.update({ where: { id: keyId }, data: { lastUsedAt: at } });
  }
}

// Deletes the keys `ids` selects (a query answering their ids) with what the MCP endpoint keeps per key
// (its logging level and declared capabilities, keyed by the key's id as text), in one statement, so that
// state never outlives its key. The MCP tables sit above this module, which is why it is named here.
async function deleteWithState(db: Db, ids: Prisma.Sql): Promise<number> {
  const [row] = await db.$queryRaw<Array<{ n: bigint }>>`WITH gone AS (DELETE FROM api_keys WHERE id IN (${ids}) RETURNING id::text AS id),
      levels AS (DELETE FROM mcp_log_levels WHERE api_key_id IN (SELECT id FROM gone)),
      capabilities AS (DELETE FROM mcp_client_capabilities WHERE api_key_id IN (SELECT id FROM gone))
    SELECT count(*) AS n FROM gone`;
  return Number(row?.n ?? 0);
}
