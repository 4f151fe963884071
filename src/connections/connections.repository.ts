import { Injectable } from '@nestjs/common';
import { SecretBox } from '../common/secrets/secret-box.js';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';
import type { Connection } from '../generated/prisma/client.js';
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

const REFRESH_LEASE_MS = 30_000;

@Injectable()
export class ConnectionsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly box: SecretBox,
  ) {}

  async createPending(tenantId: string, link: PendingLink): Promise<ConnectionRecord> {
    const row = await this.prisma.connection.create({
      data: { tenantId, ...link, stateHash: new Uint8Array(link.stateHash), codeVerifier: this.box.seal(link.codeVerifier), status: 'pending' },
      include: { provider: { select: { slug: true } } },
    });
    return this.opened(row);
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
        where: { tenantId: connection.tenantId, providerId: connection.providerId, user: connection.user, id: { not: connection.id }, status: { in: ['active', 'expired'] } },
        data: { status: 'revoked', accessToken: null, refreshToken: null },
      }),
      this.prisma.connection.update({
        where: { id: connection.id },
        data: { status: 'active', codeVerifier: null, scopes, ...this.sealedTokens(tokens) },
      }),
    ]);
  }

  async markFailed(id: string): Promise<void> {
    await this.prisma.connection.updateMany({ where: { id, status: 'pending' }, data: { status: 'revoked', codeVerifier: null } });
  }

  list(tenantId: string, filter: { providerId?: string; user?: string }): Promise<ConnectionRecord[]> {
    return this.prisma.connection.findMany({
      where: { tenantId, ...(filter.providerId !== undefined && { providerId: filter.providerId }), ...(filter.user !== undefined && { user: filter.user }) },
      include: { provider: { select: { slug: true } } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
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
      data: { status: 'revoked', accessToken: null, refreshToken: null, codeVerifier: null, refreshingUntil: null },
    });
    return done.count > 0;
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
    await this.prisma.connection.updateMany({ where: { id, status: 'active' }, data: { ...this.sealedTokens(tokens), refreshingUntil: null } });
  }

  async releaseRefreshLease(id: string): Promise<void> {
    await this.prisma.connection.updateMany({ where: { id }, data: { refreshingUntil: null } });
  }

  // A refresh the provider refused: the person has to connect again.
  async markExpired(id: string): Promise<void> {
    await this.prisma.connection.updateMany({ where: { id, status: 'active' }, data: { status: 'expired', accessToken: null, refreshToken: null, refreshingUntil: null } });
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
