import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service.js';
import { isUuid } from '../common/validation/is-uuid.js';
import type { OAuthGrant, OAuthRefreshToken, OAuthRequest } from '../generated/prisma/client.js';

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
  constructor(private readonly prisma: PrismaService) {}

  createClient(id: string, name: string, redirectUris: string[]): Promise<unknown> {
    return this.prisma.oAuthClient.create({ data: { id, name, redirectUris } });
  }

  // Registered clients that hold no live consent are forgotten a while after registering, so the table
  // does not keep every registration ever made (a forgotten client registers again, as MCP clients do).
  async deleteStaleClients(registeredBefore: Date): Promise<void> {
    await this.prisma.$executeRaw`DELETE FROM oauth_clients c WHERE c.created_at < ${registeredBefore}
      AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id AND g.revoked_at IS NULL AND (g.expires_at IS NULL OR g.expires_at > now()))`;
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

  createGrant(grant: NewOAuthGrant): Promise<OAuthGrant> {
    return this.prisma.oAuthGrant.create({ data: grant });
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

  async deleteExpiredRequests(before: Date): Promise<void> {
    await this.prisma.oAuthRequest.deleteMany({ where: { expiresAt: { lt: before } } });
  }
}
