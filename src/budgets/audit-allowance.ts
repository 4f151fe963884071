import { Injectable } from '@nestjs/common';
import type { AuditTextAllowance } from '../audit/audit-text-allowance.js';
import { TenantBudgets } from './tenant-budgets.js';

const DAY_MS = 86_400_000;

// The auditBytesPerDay budget: the text a tenant's audit rows keep in full (arguments up to
// AUDIT_ARGUMENTS_MAX_BYTES, error messages, redacted paths) per UTC day, the day an audit partition holds.
// Every call still gets its row; past the figure, each text in it is kept as a preview of
// PAST_ALLOWANCE_TEXT_BYTES. Without it, one tenant calling at its rate limit with 8 KiB of arguments
// (refused as invalid or not) grew the database by about 11 MB a minute, kept AUDIT_RETENTION_DAYS.
// Counted in memory by each instance (it bounds what this instance writes), from zero at each UTC midnight
// and at start-up.
@Injectable()
export class AuditAllowance implements AuditTextAllowance {
  private day = -1;
  // Bytes kept in full today, by tenant: emptied when the day changes.
  private readonly kept = new Map<string, number>();

  constructor(private readonly budgets: TenantBudgets) {}

  // Called for every row: never waits (TenantBudgets.currentNow).
  take(tenantId: string, bytes: number): boolean {
    const kept = this.keptToday(tenantId);
    if (kept + bytes > this.budgets.currentNow(tenantId).auditBytesPerDay) return false;
    this.kept.set(tenantId, kept + bytes);
    return true;
  }

  keptToday(tenantId: string): number {
    const today = Math.floor(Date.now() / DAY_MS);
    if (today !== this.day) {
      this.day = today;
      this.kept.clear();
    }
    return this.kept.get(tenantId) ?? 0;
  }
}
