import { Injectable } from '@nestjs/common';
import { SecretBox } from '../common/secrets/secret-box.js';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';
import { UNIQUE_TAKEN, type UniqueTaken } from '../database/unique-violation.js';
import { BudgetsRepository } from '../budgets/budgets.repository.js';
import type { AuthProvider } from '../generated/prisma/client.js';
import type { ProviderMetadata } from './provider-client.js';

export interface ProviderFields {
  slug: string;
  name: string;
  metadata: ProviderMetadata;
  discovered: boolean;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  apiHosts: string[];
  verifyUrl: string | null;
}

// Auth providers one tenant may have, its own and those registered for its MCP sources. Each row keeps up to
// about 35 KB (endpoints, a sealed secret, scopes): without a count, a tenant could add them at its request
// rate for as long as it liked.
export const MAX_AUTH_PROVIDERS = 50;

// What create answers when the tenant has its MAX_AUTH_PROVIDERS already.
export const TOO_MANY = Symbol('too many auth providers');

// A provider as the services see it: the client secret opened, the metadata parsed.
export type ProviderRecord = Omit<AuthProvider, 'metadata'> & { metadata: ProviderMetadata };

@Injectable()
export class AuthProvidersRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly box: SecretBox,
    private readonly budgetLocks: BudgetsRepository,
  ) {}

  // Counted and created under the tenant's row lock: two creations at once, on any instance, cannot both
  // take the last place. The slug is looked up first, as a violation would abort the whole transaction.
  async create(tenantId: string, fields: ProviderFields): Promise<ProviderRecord | UniqueTaken | typeof TOO_MANY> {
    const row = await this.budgetLocks.withTenantLocked(tenantId, async (tx) => {
      if ((await tx.authProvider.count({ where: { tenantId, slug: fields.slug } })) > 0) return UNIQUE_TAKEN;
      if ((await tx.authProvider.count({ where: { tenantId } })) >= MAX_AUTH_PROVIDERS) return TOO_MANY;
      return tx.authProvider.create({ data: { tenantId, ...this.sealed(fields) } });
    });
    if (row === false) throw new Error(`tenant ${tenantId} not found`);
    return typeof row === 'symbol' ? row : this.opened(row);
  }

  async list(tenantId: string): Promise<ProviderRecord[]> {
    const rows = await this.prisma.authProvider.findMany({ where: { tenantId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    return rows.map((row) => this.opened(row));
  }

  // The sign-in endpoints of other tenants' providers with this client ID (it is not secret: it is in every
  // link). Only the endpoints are read: nothing else of another tenant leaves here.
  async signInEndpointsOfClientElsewhere(tenantId: string, clientId: string): Promise<string[]> {
    const rows = await this.prisma.authProvider.findMany({
      where: { clientId, tenantId: { not: tenantId } },
      select: { metadata: true },
      take: 100,
    });
    return rows
      .map((row) => (row.metadata as { authorization_endpoint?: unknown }).authorization_endpoint)
      .filter((url) => typeof url === 'string');
  }

  async findById(tenantId: string, id: string): Promise<ProviderRecord | null> {
    if (!isUuid(id)) return null;
    const row = await this.prisma.authProvider.findFirst({ where: { id, tenantId } });
    return row && this.opened(row);
  }

  async findBySlug(tenantId: string, slug: string): Promise<ProviderRecord | null> {
    const row = await this.prisma.authProvider.findUnique({ where: { tenantId_slug: { tenantId, slug } } });
    return row && this.opened(row);
  }

  async update(tenantId: string, id: string, fields: Omit<ProviderFields, 'slug'>): Promise<ProviderRecord | null> {
    const { slug: _slug, ...data } = this.sealed({ ...fields, slug: '' });
    const updated = await this.prisma.authProvider.updateMany({ where: { id, tenantId }, data });
    return updated.count === 0 ? null : this.findById(tenantId, id);
  }

  // Its connections go with it (ON DELETE CASCADE): no token of it is used again.
  async delete(tenantId: string, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    return (await this.prisma.authProvider.deleteMany({ where: { id, tenantId } })).count > 0;
  }

  private sealed(fields: ProviderFields) {
    return { ...fields, metadata: { ...fields.metadata }, clientSecret: this.box.seal(fields.clientSecret) };
  }

  private opened(row: AuthProvider): ProviderRecord {
    return { ...row, metadata: row.metadata as unknown as ProviderMetadata, clientSecret: this.box.open(row.clientSecret) };
  }
}
