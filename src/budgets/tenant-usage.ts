import type { TenantBudgetFigures } from '../config/app-config.js';

export type BudgetName = keyof TenantBudgetFigures;
export const BUDGET_NAMES: readonly BudgetName[] = [
  'maxProjects',
  'maxSkills',
  'concurrentCommands',
  'commandMemoryBytes',
  'storedAnswerBytes',
  'concurrentCalls',
  'storageBytes',
  'storageInodes',
];

// What a tenant holds now, budget by budget (figures of every instance together, from the database).
export interface TenantUsage {
  maxProjects: number;
  maxSkills: number;
  concurrentCommands: number;
  commandMemoryBytes: number;
  storedAnswerBytes: number;
  // Calls in progress on the instance that answers (each instance counts its own).
  concurrentCalls: number;
  storageBytes: number;
  storageInodes: number;
}

export type DatabaseUsage = Omit<TenantUsage, 'storageBytes' | 'storageInodes' | 'concurrentCalls'>;
