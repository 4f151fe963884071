import { Injectable } from '@nestjs/common';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';
import { orUniqueTaken, type UniqueTaken } from '../database/unique-violation.js';
import type { Prisma, Toolset } from '../generated/prisma/client.js';

type Tx = Prisma.TransactionClient;

export type ToolsetMode = 'direct' | 'search';

// One entry of a toolset as given: which tools, and (for a single tool) how the model sees it.
export interface ToolsetEntry {
  select: string;
  name?: string;
  title?: string;
  description?: string;
  fixedArguments?: Record<string, unknown>;
  pathPrefix?: string;
}

export interface ToolsetRecord {
  id: string;
  tenantId: string;
  projectId: string;
  slug: string;
  name: string;
  mode: ToolsetMode;
  tools: readonly ToolsetEntry[];
  createdAt: Date;
  updatedAt: Date;
}

export interface ToolsetFields {
  slug: string;
  name: string;
  mode: ToolsetMode;
  tools: ToolsetEntry[];
}

const toRecord = (row: Toolset): ToolsetRecord => ({
  ...row,
  mode: row.mode as ToolsetMode,
  tools: row.tools as unknown as ToolsetEntry[],
});

// Every query is scoped by tenant and project; a toolset is found by its slug within its project. Writes
// take the transaction that holds the project's lock (`tx`), as enabling a skill does.
@Injectable()
export class ToolsetsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async create(tenantId: string, projectId: string, fields: ToolsetFields, tx: Tx): Promise<ToolsetRecord | UniqueTaken> {
    const row = await orUniqueTaken(
      tx.toolset.create({ data: { tenantId, projectId, ...fields, tools: fields.tools as unknown as Prisma.InputJsonValue } }),
    );
    return typeof row === 'symbol' ? row : toRecord(row);
  }

  async listForProject(tenantId: string, projectId: string, tx: Tx = this.prisma): Promise<ToolsetRecord[]> {
    if (!isUuid(projectId)) return [];
    const rows = await tx.toolset.findMany({ where: { tenantId, projectId }, orderBy: [{ slug: 'asc' }] });
    return rows.map(toRecord);
  }

  countForProject(tenantId: string, projectId: string, tx: Tx): Promise<number> {
    return tx.toolset.count({ where: { tenantId, projectId } });
  }

  countForTenant(tenantId: string, tx: Tx): Promise<number> {
    return tx.toolset.count({ where: { tenantId } });
  }

  async findBySlug(tenantId: string, projectId: string, slug: string, tx: Tx = this.prisma): Promise<ToolsetRecord | null> {
    if (!isUuid(projectId)) return null;
    const row = await tx.toolset.findFirst({ where: { tenantId, projectId, slug } });
    return row ? toRecord(row) : null;
  }

  // Null when the tenant has no such toolset in the project.
  async replace(
    tenantId: string,
    projectId: string,
    slug: string,
    fields: ToolsetFields,
    tx: Tx,
  ): Promise<ToolsetRecord | null | UniqueTaken> {
    const existing = await this.findBySlug(tenantId, projectId, slug, tx);
    if (!existing) return null;
    const row = await orUniqueTaken(
      tx.toolset.update({ where: { id: existing.id }, data: { ...fields, tools: fields.tools as unknown as Prisma.InputJsonValue } }),
    );
    return typeof row === 'symbol' ? row : toRecord(row);
  }

  async delete(tenantId: string, projectId: string, slug: string): Promise<boolean> {
    if (!isUuid(projectId)) return false;
    const { count } = await this.prisma.toolset.deleteMany({ where: { tenantId, projectId, slug } });
    return count > 0;
  }
}
