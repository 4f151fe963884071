import { AuditAllowance } from './audit-allowance.js';
import type { TenantBudgets } from './tenant-budgets.js';

const MiB = 1024 * 1024;
const DAY_MS = 86_400_000;

describe('AuditAllowance', () => {
  const realNow = Date.now;
  let now = 10 * DAY_MS + 1000;
  // The figure TenantBudgets.currentNow answers (tenant-budgets.spec.ts tests how it is read).
  let figure = MiB;
  const budgets = { currentNow: () => ({ auditBytesPerDay: figure }) } as unknown as TenantBudgets;
  beforeEach(() => {
    Date.now = () => now;
    figure = MiB;
  });
  afterEach(() => {
    Date.now = realNow;
  });

  it("keeps a tenant's text up to its figure, counts only what was kept, and each tenant apart", () => {
    const allowance = new AuditAllowance(budgets);
    expect(allowance.take('small', 512 * 1024)).toBe(true);
    expect(allowance.take('small', 512 * 1024)).toBe(true);
    expect(allowance.take('small', 1)).toBe(false);
    expect(allowance.keptToday('small')).toBe(MiB);
    expect(allowance.keptToday('other')).toBe(0);
    expect(allowance.take('other', MiB)).toBe(true);
  });

  it('follows the figure as it changes', () => {
    const allowance = new AuditAllowance(budgets);
    expect(allowance.take('small', MiB)).toBe(true);
    expect(allowance.take('small', MiB)).toBe(false);
    figure = 2 * MiB;
    expect(allowance.take('small', MiB)).toBe(true);
  });

  it('starts again at the next UTC day', () => {
    const allowance = new AuditAllowance(budgets);
    expect(allowance.take('small', MiB)).toBe(true);
    expect(allowance.take('small', 1)).toBe(false);
    now = 11 * DAY_MS;
    expect(allowance.keptToday('small')).toBe(0);
    expect(allowance.take('small', 1)).toBe(true);
  });
});
