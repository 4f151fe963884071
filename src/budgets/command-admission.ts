import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { tenantBudgetExceeded } from './budgets.errors.js';
import { BudgetsRepository } from './budgets.repository.js';
import { TenantBudgets } from './tenant-budgets.js';

// A lease outlives its command by this much at most when its instance dies without deleting it.
const LEASE_MARGIN_MS = 30_000;
const SWEEP_INTERVAL_MS = 60_000;

// Admits a tenant's commands against its concurrentCommands and commandMemoryBytes budgets, counted over
// every instance: each running command holds a lease row with its memory limit. Past either budget the call
// is refused before anything runs (429 tenant_budget_exceeded, Retry-After), never queued: a model retries,
// and a queue would hold the caller's connection for as long as someone else's commands run.
@Injectable()
export class CommandAdmission implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('CommandAdmission');
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly repository: BudgetsRepository,
    private readonly budgets: TenantBudgets,
  ) {}

  onModuleInit(): void {
    this.sweeper = setInterval(() => void this.repository.deleteExpiredLeases().catch(() => undefined), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }

  // Runs `command` once the tenant has room for one more command of `memoryBytes`, and frees the room after.
  async run<T>(tenantId: string, memoryBytes: number, timeoutMs: number, command: () => Promise<T>): Promise<T> {
    const id = randomUUID();
    this.budgets.active(tenantId);
    const refusal = await this.repository.withTenantLocked(tenantId, async (tx, overrides) => {
      const budget = this.budgets.merge(overrides);
      const running = await this.repository.runningCommands(tx, tenantId);
      const wait = "Wait for the tenant's running commands to finish, then call again.";
      if (running.count + 1 > budget.concurrentCommands)
        return tenantBudgetExceeded('concurrentCommands', budget.concurrentCommands, running.count, 1, wait);
      if (running.memoryBytes + memoryBytes > budget.commandMemoryBytes) {
        return tenantBudgetExceeded('commandMemoryBytes', budget.commandMemoryBytes, running.memoryBytes, memoryBytes, wait);
      }
      await this.repository.insertLease(tx, { id, tenantId, memoryBytes, expiresAt: new Date(Date.now() + timeoutMs + LEASE_MARGIN_MS) });
      return null;
    });
    if (refusal) throw refusal;
    try {
      return await command();
    } finally {
      await this.repository.deleteLease(id).catch((error: unknown) => {
        // It stops counting at its expiry anyway.
        this.logger.warn(`A command lease could not be deleted: ${error instanceof Error ? error.message : String(error)}`);
      });
    }
  }
}
