import type { TenantBudgetFigures } from '../config/app-config.js';

export type BudgetName = keyof TenantBudgetFigures;
export const BUDGET_NAMES: readonly BudgetName[] = [
  'maxProjects',
  'maxSkills',
  'maxToolsets',
  'concurrentCommands',
  'commandMemoryBytes',
  'storedAnswerBytes',
  'concurrentCalls',
  'unreadAnswerBytes',
  'auditBytesPerDay',
  'storageBytes',
  'storageInodes',
];

// What a tenant holds now, budget by budget (figures of every instance together, from the database).
export interface TenantUsage {
  maxProjects: number;
  maxSkills: number;
  maxToolsets: number;
  concurrentCommands: number;
  commandMemoryBytes: number;
  storedAnswerBytes: number;
  // Calls in progress on the instance that answers (each instance counts its own).
  concurrentCalls: number;
  // Bytes of its answers written on the instance that answers and not yet read by its clients (each instance its own).
  unreadAnswerBytes: number;
  // Bytes of text its audit rows kept in full today (UTC) on the instance that answers (each instance its own).
  auditBytesPerDay: number;
  storageBytes: number;
  storageInodes: number;
}

// Counted by each instance for itself (InstanceUsage); storage is measured on disk; the database counts the rest.
export type InstanceCounted = Pick<TenantUsage, 'concurrentCalls' | 'unreadAnswerBytes' | 'auditBytesPerDay'>;
export type DatabaseUsage = Omit<TenantUsage, keyof InstanceCounted | 'storageBytes' | 'storageInodes'>;
