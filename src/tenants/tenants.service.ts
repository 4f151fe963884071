import { Injectable } from '@nestjs/common';
import { Prisma, type Tenant } from '../generated/prisma/client.js';
import { ApiKeysService } from './api-keys.service.js';
import { TenantsRepository } from './tenants.repository.js';
import { tenantNameTaken, tenantNotFound } from './tenants.errors.js';

@Injectable()
export class TenantsService {
  constructor(
    private readonly tenants: TenantsRepository,
    private readonly apiKeys: ApiKeysService,
  ) {}

  async create(name: string): Promise<Tenant> {
    try {
      return await this.tenants.create(name);
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') throw tenantNameTaken(name);
      throw error;
    }
  }

  list(): Promise<Tenant[]> {
    return this.tenants.list();
  }

  async get(tenantId: string): Promise<Tenant> {
    const tenant = await this.tenants.findById(tenantId);
    if (!tenant) throw tenantNotFound(tenantId);
    return tenant;
  }

  async delete(tenantId: string): Promise<void> {
    if (!(await this.tenants.deleteById(tenantId))) throw tenantNotFound(tenantId);
    this.apiKeys.forgetTenant(tenantId);
  }

  async issueKey(tenantId: string, name: string) {
    await this.get(tenantId);
    return this.apiKeys.issue(tenantId, name);
  }

  isEmpty(): Promise<boolean> {
    return this.tenants.count().then((n) => n === 0);
  }
}
