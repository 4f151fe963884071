import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service.js';
import { orUniqueTaken, type UniqueTaken } from '../database/unique-violation.js';
import { isUuid } from '../common/validation/is-uuid.js';
import type { Tenant } from '../generated/prisma/client.js';

@Injectable()
export class TenantsRepository {
  constructor(private readonly prisma: PrismaService) {}

  // UNIQUE_TAKEN: another tenant has this name.
  create(name: string): Promise<Tenant | UniqueTaken> {
    return orUniqueTaken(this.prisma.tenant.create({ data: { name } }));
  }

  list(): Promise<Tenant[]> {
    return this.prisma.tenant.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  }

  findById(id: string): Promise<Tenant | null> {
    return isUuid(id) ? this.prisma.tenant.findUnique({ where: { id } }) : Promise.resolve(null);
  }

  async deleteById(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const { count } = await this.prisma.tenant.deleteMany({ where: { id } });
    return count > 0;
  }

  count(): Promise<number> {
    return this.prisma.tenant.count();
  }
}
