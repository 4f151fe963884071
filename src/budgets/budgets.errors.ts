import { describeBytes } from '../common/format/describe-bytes.js';
import { AppError } from '../common/errors/app-error.js';
import type { BudgetName } from './tenant-usage.js';

const isBytes = (budget: BudgetName) => budget.endsWith('Bytes');
const show = (budget: BudgetName, figure: number) => (isBytes(budget) ? describeBytes(figure) : String(figure));

// Budgets that free up by themselves as calls end or clients read: 429 with Retry-After.
const TRANSIENT: ReadonlySet<BudgetName> = new Set(['concurrentCommands', 'commandMemoryBytes', 'concurrentCalls', 'unreadAnswerBytes']);

// One code for every budget, naming which one and its figure. Budgets that free up as calls end (running
// commands) answer 429 with Retry-After; the others (projects, stored answers) 403 until something is
// deleted or expires, as Kubernetes answers a ResourceQuota. `asked` 0: the request adds nothing it can
// name beforehand (an answer not yet made), and is refused because the budget is already used up.
export function tenantBudgetExceeded(budget: BudgetName, limit: number, inUse: number, asked: number, advice: string): AppError {
  const transient = TRANSIENT.has(budget);
  const needs = asked > 0 ? ` and this needs ${show(budget, asked)} more` : '';
  return new AppError(
    transient ? 429 : 403,
    'tenant_budget_exceeded',
    `The tenant's ${budget} budget is ${show(budget, limit)}; ${show(budget, inUse)} is in use${needs}. ${advice}`,
    { details: { budget, limit, inUse, asked }, ...(transient && { headers: { 'Retry-After': '1' } }) },
  );
}
