import { Injectable } from '@nestjs/common';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';

// A stored policy set: its text, its version (one more on every change) and the key that set it.
export interface PolicyRecord {
  text: string;
  version: number;
  setByKeyId: string | null;
  setByName: string | null;
  updatedAt: Date;
}

export interface PolicySetter {
  keyId: string;
  name: string;
}

const SELECTED = { text: true, version: true, setByKeyId: true, setByName: true, updatedAt: true } as const;

@Injectable()
export class PoliciesRepository {
  constructor(private readonly prisma: PrismaService) {}

  findForTenant(tenantId: string): Promise<PolicyRecord | null> {
    return this.prisma.tenantPolicy.findUnique({ where: { tenantId }, select: SELECTED });
  }

  // The project's set; the tenant is part of the lookup, so another tenant's project has none.
  findForProject(tenantId: string, projectId: string): Promise<PolicyRecord | null> {
    if (!isUuid(projectId)) return Promise.resolve(null);
    return this.prisma.projectPolicy.findFirst({ where: { projectId, tenantId }, select: SELECTED });
  }

  saveForTenant(tenantId: string, text: string, by: PolicySetter): Promise<PolicyRecord> {
    return this.prisma.tenantPolicy.upsert({
      where: { tenantId },
      create: { tenantId, text, setByKeyId: by.keyId, setByName: by.name },
      update: { text, version: { increment: 1 }, setByKeyId: by.keyId, setByName: by.name },
      select: SELECTED,
    });
  }

  // The caller has checked the project is the tenant's.
  saveForProject(tenantId: string, projectId: string, text: string, by: PolicySetter): Promise<PolicyRecord> {
    return this.prisma.projectPolicy.upsert({
      where: { projectId },
      create: { projectId, tenantId, text, setByKeyId: by.keyId, setByName: by.name },
      update: { text, version: { increment: 1 }, setByKeyId: by.keyId, setByName: by.name },
      select: SELECTED,
    });
  }
}
