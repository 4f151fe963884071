import type { AppConfig, TenantBudgetFigures } from '../config/app-config.js';
import type { BudgetsRepository } from './budgets.repository.js';
import { TenantBudgets } from './tenant-budgets.js';

const DEFAULTS = { concurrentCalls: 32, auditBytesPerDay: 100 } as TenantBudgetFigures;

// A repository whose rows answer when told to: each read is counted, and waits for `answer()`.
function rows(own: Record<string, Partial<TenantBudgetFigures>>) {
  const pending: Array<() => void> = [];
  let reads = 0;
  const repository = {
    overrides: (tenantId: string) =>
      new Promise((resolve) => {
        reads++;
        pending.push(() => resolve(tenantId in own ? { ...own[tenantId] } : null));
      }),
  } as unknown as BudgetsRepository;
  const answer = async () => {
    for (const resolve of pending.splice(0)) resolve();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { repository, answer, reads: () => reads };
}

describe('TenantBudgets: the figures checked on every call', () => {
  const realNow = Date.now;
  let now = 1_000_000;
  beforeEach(() => {
    Date.now = () => now;
  });
  afterEach(() => {
    Date.now = realNow;
  });
  const budgetsOf = (repository: BudgetsRepository) => new TenantBudgets({ budgets: DEFAULTS } as AppConfig, repository);

  it('reads a tenant’s row once for callers at once, then answers from it for 5 s', async () => {
    const own = { a: { concurrentCalls: 4 } };
    const { repository, answer, reads } = rows(own);
    const budgets = budgetsOf(repository);
    const both = Promise.all([budgets.current('a'), budgets.current('a')]);
    await answer();
    expect((await both).map((f) => f.concurrentCalls)).toEqual([4, 4]);
    expect(reads()).toBe(1);
    own.a.concurrentCalls = 8;
    now += 5_000;
    expect((await budgets.current('a')).concurrentCalls).toBe(4);
    now += 1;
    const again = budgets.current('a');
    await answer();
    expect((await again).concurrentCalls).toBe(8);
    expect(reads()).toBe(2);
  });

  it('answers the defaults for a tenant without a row', async () => {
    const { repository, answer } = rows({});
    const budgets = budgetsOf(repository);
    const gone = budgets.current('gone');
    await answer();
    expect(await gone).toEqual(DEFAULTS);
  });

  it('currentNow never waits: the defaults at first, then the figures last read, kept while read again', async () => {
    const own = { a: { auditBytesPerDay: 10 } };
    const { repository, answer, reads } = rows(own);
    const budgets = budgetsOf(repository);
    expect(budgets.currentNow('a').auditBytesPerDay).toBe(100);
    await answer();
    expect(budgets.currentNow('a').auditBytesPerDay).toBe(10);
    own.a.auditBytesPerDay = 20;
    now += 5_001;
    expect(budgets.currentNow('a').auditBytesPerDay).toBe(10);
    expect(reads()).toBe(2);
    await answer();
    expect(budgets.currentNow('a').auditBytesPerDay).toBe(20);
  });

  it('holds figures the operator set here at once, and a read begun before does not put the old ones back', async () => {
    const own = { a: { concurrentCalls: 4 } };
    const { repository, answer } = rows(own);
    const budgets = budgetsOf(repository);
    const before = budgets.current('a');
    budgets.remember('a', { ...DEFAULTS, concurrentCalls: 9 });
    await answer();
    expect((await before).concurrentCalls).toBe(4);
    expect((await budgets.current('a')).concurrentCalls).toBe(9);
  });
});
