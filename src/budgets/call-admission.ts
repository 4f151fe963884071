import { Injectable } from '@nestjs/common';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { tenantBudgetExceeded } from './budgets.errors.js';
import { TenantBudgets } from './tenant-budgets.js';

// How long a tenant's concurrentCalls figure is used before its row is read again: a change made on another
// instance holds there within this (one made here, at once).
const FIGURE_TTL_MS = 5_000;
const FIGURES_CACHED = 10_000;

// Admits a tenant's tool calls against its concurrentCalls budget on this instance. What a call in progress
// holds is this instance's: its answer in memory (up to FETCH_MAX_BYTES_LIMIT or RESPONSE_MAX_BYTES), its
// upstream connection and descriptors, its share of the event loop. Without a bound, one tenant's thousand
// slow fetch_url calls held 2,000 descriptors and a gigabyte of answers while every other tenant waited. Past
// the budget a call is refused before anything runs (429 tenant_budget_exceeded, Retry-After), never queued.
// Counted in memory, per instance: the figure is per instance because what it protects is.
@Injectable()
export class CallAdmission {
  private readonly running = new Map<string, number>();
  private readonly limits = new TtlLruCache<string, number>(FIGURE_TTL_MS, FIGURES_CACHED);

  constructor(private readonly budgets: TenantBudgets) {}

  // Takes a place for one call, or throws tenant_budget_exceeded; the answer gives it back (once).
  async admit(tenantId: string): Promise<() => void> {
    const limit = await this.limitOf(tenantId);
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

  // After the operator changed the tenant's figures here.
  forget(tenantId: string): void {
    this.limits.delete(tenantId);
  }

  private async limitOf(tenantId: string): Promise<number> {
    const cached = this.limits.get(tenantId);
    if (cached !== undefined) return cached;
    // A tenant deleted meanwhile has no row: its calls are refused further on, by the gate.
    const limit = (await this.budgets.figures(tenantId))?.concurrentCalls ?? this.budgets.defaults.concurrentCalls;
    this.limits.set(tenantId, limit);
    return limit;
  }
}
