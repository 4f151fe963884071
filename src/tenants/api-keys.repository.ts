import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service.js';
import { isUuid } from '../common/validation/is-uuid.js';
import type { ApiKey } from '../generated/prisma/client.js';
import type { KeyGrant } from './key-grant.js';

// A key as listed: an OAuth access token with the key that consented to its client.
export type ListedApiKey = ApiKey & { oauthGrant?: { decidedByKeyId: string } | null };

@Injectable()
export class ApiKeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(tenantId: string, name: string, prefix: string, keyHash: Buffer, grant: KeyGrant): Promise<ApiKey> {
    return this.prisma.apiKey.create({ data: { tenantId, name, prefix, keyHash: new Uint8Array(keyHash), ...grant } });
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

  async revokeGrantKeysExcept(tenantId: string, grantId: string, keepKeyId: string): Promise<Array<{ id: string; prefix: string }>> {
    const keys = await this.prisma.apiKey.findMany({
      where: { oauthGrantId: grantId, tenantId, revokedAt: null, id: { not: keepKeyId } },
      select: { id: true, prefix: true },
    });
    await this.prisma.apiKey.updateMany({ where: { id: { in: keys.map((k) => k.id) } }, data: { revokedAt: new Date() } });
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
