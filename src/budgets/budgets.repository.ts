import { Injectable } from '@nestjs/common';
import { isUuid } from '../common/validation/is-uuid.js';
import { PrismaService } from '../database/prisma.service.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { TenantBudgetFigures } from '../config/app-config.js';
import type { DatabaseUsage } from './tenant-usage.js';

type Tx = Prisma.TransactionClient;

// Budget checks that must hold across instances take the tenant's row lock first (SELECT ... FOR UPDATE),
// then count: every instance checking the same tenant waits its turn, and each count, a statement of its
// own, sees what the one before it committed.
@Injectable()
export class BudgetsRepository {
  constructor(private readonly prisma: PrismaService) {}

  // For reads outside a transaction.
  get client(): PrismaService {
    return this.prisma;
  }

  async overrides(tenantId: string): Promise<Partial<TenantBudgetFigures> | null> {
    if (!isUuid(tenantId)) return null;
    const tenant = await this.prisma.tenant.findUnique({ where: { id: tenantId }, select: { budgets: true } });
    return tenant ? ((tenant.budgets ?? {}) as Partial<TenantBudgetFigures>) : null;
  }

  async setOverrides(tenantId: string, budgets: Partial<TenantBudgetFigures>): Promise<void> {
    await this.prisma.tenant.update({ where: { id: tenantId }, data: { budgets } });
  }

  // `fn` runs in a transaction holding the tenant's row lock; false when there is no such tenant.
  async withTenantLocked<T>(tenantId: string, fn: (tx: Tx, overrides: Partial<TenantBudgetFigures>) => Promise<T>): Promise<T | false> {
    if (!isUuid(tenantId)) return false;
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<
        Array<{ budgets: Partial<TenantBudgetFigures> }>
      >`SELECT budgets FROM tenants WHERE id = ${tenantId}::uuid FOR UPDATE`;
      if (rows.length === 0) return false;
      return fn(tx, rows[0].budgets ?? {});
    });
  }

  async runningCommands(tx: Tx | PrismaService, tenantId: string): Promise<{ count: number; memoryBytes: number }> {
    const [row] = await tx.$queryRaw<Array<{ count: bigint; memory: bigint | null }>>`
      SELECT count(*) AS count, sum(memory_bytes) AS memory FROM command_leases WHERE tenant_id = ${tenantId}::uuid AND expires_at > now()`;
    return { count: Number(row?.count ?? 0), memoryBytes: Number(row?.memory ?? 0) };
  }

  async insertLease(tx: Tx, lease: { id: string; tenantId: string; memoryBytes: number; expiresAt: Date }): Promise<void> {
    await tx.commandLease.create({
      data: { id: lease.id, tenantId: lease.tenantId, memoryBytes: BigInt(lease.memoryBytes), expiresAt: lease.expiresAt },
    });
  }

  async deleteLease(id: string): Promise<void> {
    await this.prisma.commandLease.deleteMany({ where: { id } });
  }

  // Leases of instances that died; they stopped counting at expiry, this only keeps the table small.
  async deleteExpiredLeases(): Promise<number> {
    return (await this.prisma.commandLease.deleteMany({ where: { expiresAt: { lte: new Date() } } })).count;
  }

  async storedAnswerBytes(tx: Tx | PrismaService, tenantId: string): Promise<number> {
    // Idempotency-Keys' answers: the running total the table's triggers keep (one row, whatever the tenant
    // stored; expired rows count until the sweep deletes them). A parked call counts its (sealed) arguments
    // while it waits, as stored (pg_column_size: no jsonb turned into text on every park), and its outcome
    // once decided; arguments are dropped at the decision, so a decided call counts its outcome alone.
    // octet_length of a text or json value reads its stored size, without decompressing it. An MCP task of a
    // call that ran at once keeps its result (an hour), its size in result_bytes; expired ones count until
    // the sweep.
    const [row] = await tx.$queryRaw<Array<{ bytes: bigint | null }>>`
      SELECT coalesce((SELECT bytes FROM tenant_stored_answers WHERE tenant_id = ${tenantId}::uuid), 0)
           + (SELECT coalesce(sum(coalesce(octet_length(outcome::text), 0) + coalesce(pg_column_size(arguments), 0)), 0) FROM parked_calls
               WHERE tenant_id = ${tenantId}::uuid AND (outcome IS NOT NULL OR arguments IS NOT NULL))
           + (SELECT coalesce(sum(result_bytes), 0) FROM mcp_tasks WHERE tenant_id = ${tenantId}::uuid) AS bytes`;
    return Number(row?.bytes ?? 0);
  }

  async usage(tenantId: string): Promise<DatabaseUsage> {
    const [projects, skills, toolsets, commands, storedAnswerBytes] = await Promise.all([
      this.prisma.project.count({ where: { tenantId } }),
      this.prisma.skill.count({ where: { tenantId } }),
      this.prisma.toolset.count({ where: { tenantId } }),
      this.runningCommands(this.prisma, tenantId),
      this.storedAnswerBytes(this.prisma, tenantId),
    ]);
    return {
      maxProjects: projects,
      maxSkills: skills,
      maxToolsets: toolsets,
      concurrentCommands: commands.count,
      commandMemoryBytes: commands.memoryBytes,
      storedAnswerBytes,
    };
  }
}
