import { Injectable } from '@nestjs/common';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';
import { Prisma, type Invocation } from '../generated/prisma/client.js';

export interface InvocationRecord {
  id: string;
  tenantId: string;
  projectId: string;
  tool: string;
  status: InvocationStatus;
  event: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  durationMs: number;
  arguments: unknown;
  argumentsTruncated: boolean;
  startedAt: Date;
  finishedAt: Date;
}

export const INVOCATION_STATUSES = ['ok', 'error', 'timeout', 'invalid_arguments', 'denied'] as const;
export type InvocationStatus = (typeof INVOCATION_STATUSES)[number];

export interface InvocationFilter {
  tool?: string;
  status?: InvocationStatus;
}

@Injectable()
export class AuditRepository {
  constructor(private readonly prisma: PrismaService) {}

  // One multi-row insert; rows already written by an earlier, interrupted attempt are skipped.
  async insertMany(records: InvocationRecord[]): Promise<void> {
    await this.prisma.invocation.createMany({
      data: records.map((record) => ({
        ...record,
        arguments: record.arguments === undefined || record.arguments === null ? Prisma.DbNull : (record.arguments as Prisma.InputJsonValue),
      })),
      skipDuplicates: true,
    });
  }

  listPage(
    tenantId: string,
    projectId: string,
    filter: InvocationFilter,
    limit: number,
    afterSeq: bigint | null,
  ): Promise<Invocation[]> {
    if (!isUuid(projectId)) return Promise.resolve([]);
    return this.prisma.invocation.findMany({
      where: { tenantId, projectId, ...filter, ...(afterSeq !== null ? { seq: { gt: afterSeq } } : {}) },
      orderBy: { seq: 'asc' },
      take: limit + 1,
    });
  }

  findById(tenantId: string, projectId: string, id: string): Promise<Invocation | null> {
    if (!isUuid(projectId) || !isUuid(id)) return Promise.resolve(null);
    return this.prisma.invocation.findFirst({ where: { id, tenantId, projectId } });
  }

  countForProject(tenantId: string, projectId: string): Promise<number> {
    return this.prisma.invocation.count({ where: { tenantId, projectId } });
  }
}
