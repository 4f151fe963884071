import { Injectable } from '@nestjs/common';
import { BudgetsRepository } from '../budgets/budgets.repository.js';
import { afterCursor, type CursorPosition } from '../common/pagination/cursor.js';
import { SecretBox } from '../common/secrets/secret-box.js';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';
import type { Connection, Prisma } from '../generated/prisma/client.js';
import type { IssuedTokens } from './provider-client.js';

// A connection as the services see it: its tokens and PKCE verifier opened (never shown to anyone).
export type ConnectionRecord = Connection & { provider: { slug: string } };

export interface PendingLink {
  providerId: string;
  user: string | null;
  scopes: string[];
  stateHash: Buffer;
  codeVerifier: string;
  returnTo: string | null;
  linkExpiresAt: Date;
}

// How many rows of a tenant's a new link may find: links waiting (unopened, or opened and waiting for the
// tenant's app to verify the person), and connections of any status.
export interface PendingLimits {
  waiting: number;
  total: number;
}

// What createPending answers when the tenant is at one of its PendingLimits.
export const TOO_MANY_WAITING = Symbol('too many links waiting');
export const TOO_MANY_CONNECTIONS = Symbol('too many connections');

const REFRESH_LEASE_MS = 30_000;
const DEAD_LINK_GRACE_MS = 60_000;
// A revoked connection keeps no token, verifier or flow: nothing of it can be used again.
const REVOKED = {
  status: 'revoked',
  accessToken: null,
  refreshToken: null,
  codeVerifier: null,
  refreshingUntil: null,
  verifyFlowHash: null,
  verifyExpiresAt: null,
} as const;

@Injectable()
export class ConnectionsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly box: SecretBox,
    private readonly budgetLocks: BudgetsRepository,
  ) {}

  // A new link, unless the tenant is at one of its limits. Counted and created under the tenant's row lock:
  // links asked for at once, on any instance, cannot both take the last place. Links past their time go
  // first, so what a tenant keeps of them is bounded however many calls asked for one.
  async createPending(
    tenantId: string,
    link: PendingLink,
    limits: PendingLimits,
  ): Promise<ConnectionRecord | typeof TOO_MANY_WAITING | typeof TOO_MANY_CONNECTIONS> {
    const row = await this.budgetLocks.withTenantLocked(tenantId, async (tx) => {
      const now = new Date();
      // Past its link's expiry (with a minute for an exchange that began just before it) and not waiting on a
      // verification: such a pending connection can no longer become anything.
      await tx.connection.deleteMany({
        where: {
          tenantId,
          status: 'pending',
          linkExpiresAt: { lte: new Date(now.getTime() - DEAD_LINK_GRACE_MS) },
          OR: [{ verifyExpiresAt: null }, { verifyExpiresAt: { lte: now } }],
        },
      });
      const waiting = await tx.connection.count({
        where: { tenantId, status: 'pending', OR: [{ linkExpiresAt: { gt: now } }, { verifyExpiresAt: { gt: now } }] },
      });
      if (waiting >= limits.waiting) return TOO_MANY_WAITING;
      if ((await tx.connection.count({ where: { tenantId } })) >= limits.total) return TOO_MANY_CONNECTIONS;
      return tx.connection.create({
        data: {
          tenantId,
          ...link,
          stateHash: new Uint8Array(link.stateHash),
          codeVerifier: this.box.seal(link.codeVerifier),
          status: 'pending',
        },
        include: { provider: { select: { slug: true } } },
      });
    });
    if (row === false) throw new Error(`tenant ${tenantId} not found`);
    return typeof row === 'symbol' ? row : this.opened(row);
  }

  // Takes the link of this state, once: a second use, an expired link or one already decided finds nothing.
  async consumeLink(stateHash: Buffer): Promise<ConnectionRecord | null> {
    const now = new Date();
    const hash = new Uint8Array(stateHash);
    const taken = await this.prisma.connection.updateMany({
      where: { stateHash: hash, status: 'pending', linkUsedAt: null, linkExpiresAt: { gt: now } },
      data: { linkUsedAt: now },
    });
    if (taken.count !== 1) return null;
    const row = await this.prisma.connection.findUnique({ where: { stateHash: hash }, include: { provider: { select: { slug: true } } } });
    return row && this.opened(row);
  }

  // The link's connection becomes active with its tokens; the person's earlier connections to the provider end.
  async activate(connection: ConnectionRecord, tokens: IssuedTokens, scopes: string[]): Promise<void> {
    await this.prisma.$transaction([
      this.prisma.connection.updateMany({
        where: {
          tenantId: connection.tenantId,
          providerId: connection.providerId,
          user: connection.user,
          id: { not: connection.id },
          status: { in: ['active', 'expired'] },
        },
        data: { status: 'revoked', accessToken: null, refreshToken: null },
      }),
      this.prisma.connection.update({
        where: { id: connection.id },
        data: { status: 'active', codeVerifier: null, scopes, ...this.sealedTokens(tokens) },
      }),
    ]);
  }

  // With the provider's verifyUrl: the tokens wait, sealed, on the still pending connection until the
  // tenant's app confirms the flow (never used before: calls take only active connections).
  async awaitVerification(
    connection: ConnectionRecord,
    tokens: IssuedTokens,
    scopes: string[],
    flowHash: Buffer,
    until: Date,
  ): Promise<void> {
    await this.prisma.connection.updateMany({
      where: { id: connection.id, status: 'pending' },
      data: { codeVerifier: null, scopes, ...this.sealedTokens(tokens), verifyFlowHash: new Uint8Array(flowHash), verifyExpiresAt: until },
    });
  }

  // Takes the flow of this tenant, once: a second use, an expired flow or another tenant's finds nothing
  // (and leaves another tenant's flow untouched).
  async takeFlow(tenantId: string, flowHash: Buffer): Promise<ConnectionRecord | null> {
    const hash = new Uint8Array(flowHash);
    const row = await this.prisma.connection.findFirst({
      where: { tenantId, verifyFlowHash: hash },
      include: { provider: { select: { slug: true } } },
    });
    if (!row) return null;
    const taken = await this.prisma.connection.updateMany({
      where: { id: row.id, verifyFlowHash: hash, status: 'pending', verifyExpiresAt: { gt: new Date() } },
      data: { verifyFlowHash: null },
    });
    if (taken.count === 1) return this.opened(row);
    // Presented too late: the tokens that waited for it are dropped (the connection reads as expired).
    await this.prisma.connection.updateMany({
      where: { id: row.id, status: 'pending', verifyExpiresAt: { lte: new Date() } },
      data: { accessToken: null, refreshToken: null, verifyFlowHash: null },
    });
    return null;
  }

  // The confirmed connection becomes active; the person's earlier connections to the provider end.
  async activateVerified(connection: ConnectionRecord): Promise<boolean> {
    const [, done] = await this.prisma.$transaction([
      this.prisma.connection.updateMany({
        where: {
          tenantId: connection.tenantId,
          providerId: connection.providerId,
          user: connection.user,
          id: { not: connection.id },
          status: { in: ['active', 'expired'] },
        },
        data: { status: 'revoked', accessToken: null, refreshToken: null },
      }),
      this.prisma.connection.updateMany({
        where: { id: connection.id, status: 'pending' },
        data: { status: 'active', verifyExpiresAt: null },
      }),
    ]);
    return done.count === 1;
  }

  // The provider's connections, tokens opened, before it is deleted: they are revoked at the provider after.
  async listWithTokens(tenantId: string, providerId: string): Promise<ConnectionRecord[]> {
    const rows = await this.prisma.connection.findMany({
      where: { tenantId, providerId, OR: [{ accessToken: { not: null } }, { refreshToken: { not: null } }] },
      include: { provider: { select: { slug: true } } },
    });
    return rows.map((row) => this.opened(row));
  }

  async markFailed(id: string): Promise<void> {
    await this.prisma.connection.updateMany({
      where: { id, status: 'pending' },
      data: { status: 'revoked', codeVerifier: null, accessToken: null, refreshToken: null, verifyFlowHash: null, verifyExpiresAt: null },
    });
  }

  // One row more than asked, so the caller knows whether another page exists.
  listPage(
    tenantId: string,
    filter: { providerId?: string; user?: string },
    limit: number,
    after: CursorPosition | null,
  ): Promise<ConnectionRecord[]> {
    return this.prisma.connection.findMany({
      where: {
        tenantId,
        ...(filter.providerId !== undefined && { providerId: filter.providerId }),
        ...(filter.user !== undefined && { user: filter.user }),
        ...afterCursor(after),
      },
      include: { provider: { select: { slug: true } } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: limit + 1,
    });
  }

  async findById(tenantId: string, id: string): Promise<ConnectionRecord | null> {
    if (!isUuid(id)) return null;
    const row = await this.prisma.connection.findFirst({ where: { id, tenantId }, include: { provider: { select: { slug: true } } } });
    return row && this.opened(row);
  }

  // The connection a call of this user (null: the tenant's own) uses at the provider: the newest that is not pending.
  async findCurrent(tenantId: string, providerId: string, user: string | null): Promise<ConnectionRecord | null> {
    const row = await this.prisma.connection.findFirst({
      where: { tenantId, providerId, user, status: { in: ['active', 'expired'] } },
      include: { provider: { select: { slug: true } } },
      orderBy: [{ createdAt: 'desc' }],
    });
    return row && this.opened(row);
  }

  async revoke(tenantId: string, id: string): Promise<boolean> {
    const done = await this.prisma.connection.updateMany({
      where: { id, tenantId, status: { not: 'revoked' } },
      data: REVOKED,
    });
    return done.count > 0;
  }

  // Every connection of the provider ends, its tokens dropped: they were issued by a server the provider no
  // longer names, and must not be sent to the one it names now.
  async revokeAllOf(tenantId: string, providerId: string): Promise<number> {
    const done = await this.prisma.connection.updateMany({
      where: { tenantId, providerId, status: { not: 'revoked' } },
      data: REVOKED,
    });
    return done.count;
  }

  // One refresh at a time per connection, on any instance: the lease is taken by one conditional update.
  async takeRefreshLease(id: string): Promise<boolean> {
    const now = new Date();
    const taken = await this.prisma.connection.updateMany({
      where: { id, status: 'active', OR: [{ refreshingUntil: null }, { refreshingUntil: { lt: now } }] },
      data: { refreshingUntil: new Date(now.getTime() + REFRESH_LEASE_MS) },
    });
    return taken.count === 1;
  }

  async saveRefreshed(id: string, tokens: IssuedTokens): Promise<void> {
    await this.prisma.connection.updateMany({
      where: { id, status: 'active' },
      data: { ...this.sealedTokens(tokens), refreshingUntil: null },
    });
  }

  async releaseRefreshLease(id: string): Promise<void> {
    await this.prisma.connection.updateMany({ where: { id }, data: { refreshingUntil: null } });
  }

  // A refresh the provider refused: the person has to connect again.
  async markExpired(id: string): Promise<void> {
    await this.prisma.connection.updateMany({
      where: { id, status: 'active' },
      data: { status: 'expired', accessToken: null, refreshToken: null, refreshingUntil: null },
    });
  }

  // Of every tenant, at most `limit` connections no call can use again: ended (revoked, expired, or failed,
  // which is revoked) before `endedBefore`, and pending ones whose link, and verification flow if any, ran
  // out before `linkBefore`. Never an active one. Answers how many were deleted.
  async deleteSpent(endedBefore: Date, linkBefore: Date, limit: number): Promise<number> {
    const spent = {
      OR: [
        { status: { in: ['revoked', 'expired'] }, updatedAt: { lt: endedBefore } },
        {
          status: 'pending',
          linkExpiresAt: { lt: linkBefore },
          OR: [{ verifyExpiresAt: null }, { verifyExpiresAt: { lt: linkBefore } }],
        },
      ],
    } satisfies Prisma.ConnectionWhereInput;
    const rows = await this.prisma.connection.findMany({ where: spent, select: { id: true }, take: limit });
    if (rows.length === 0) return 0;
    // The condition again: a row that changed since it was read stays.
    const done = await this.prisma.connection.deleteMany({ where: { id: { in: rows.map((row) => row.id) }, ...spent } });
    return done.count;
  }

  async touch(id: string): Promise<void> {
    await this.prisma.connection.updateMany({ where: { id }, data: { lastUsedAt: new Date() } });
  }

  private sealedTokens(tokens: IssuedTokens) {
    return {
      accessToken: this.box.seal(tokens.accessToken),
      refreshToken: tokens.refreshToken === null ? null : this.box.seal(tokens.refreshToken),
      tokenExpiresAt: tokens.expiresAt,
    };
  }

  private opened(row: ConnectionRecord): ConnectionRecord {
    const open = (value: string | null) => (value === null ? null : this.box.open(value));
    return { ...row, accessToken: open(row.accessToken), refreshToken: open(row.refreshToken), codeVerifier: open(row.codeVerifier) };
  }
}
