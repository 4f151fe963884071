import { Injectable } from '@nestjs/common';
import { tenantBudgetExceeded } from './budgets.errors.js';
import { TenantBudgets } from './tenant-budgets.js';

// Admits a tenant's tool calls against its concurrentCalls budget on this instance. What a call in progress
// holds is this instance's: its answer in memory (up to FETCH_MAX_BYTES_LIMIT or RESPONSE_MAX_BYTES), its
// upstream connection and descriptors, its share of the event loop. Without a bound, one tenant's thousand
// slow fetch_url calls held 2,000 descriptors and a gigabyte of answers while every other tenant waited. Past
// the budget a call is refused before anything runs (429 tenant_budget_exceeded, Retry-After), never queued.
// Counted in memory, per instance: the figure is per instance because what it protects is.
@Injectable()
export class CallAdmission {
  private readonly running = new Map<string, number>();

  constructor(private readonly budgets: TenantBudgets) {}

  // Takes a place for one call, or throws tenant_budget_exceeded; the answer gives it back (once).
  async admit(tenantId: string): Promise<() => void> {
    // The figure read within a few seconds (TenantBudgets.current).
    const limit = (await this.budgets.current(tenantId)).concurrentCalls;
    const inUse = this.running.get(tenantId) ?? 0;
    if (inUse + 1 > limit) {
      throw tenantBudgetExceeded('concurrentCalls', limit, inUse, 1, "Wait for the tenant's calls in progress to finish, then call again.");
    }
    this.running.set(tenantId, inUse + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.running.get(tenantId) ?? 1) - 1;
      if (left > 0) this.running.set(tenantId, left);
      else this.running.delete(tenantId);
    };
  }

  inProgress(tenantId: string): number {
    return this.running.get(tenantId) ?? 0;
  }
}
