// How much text (arguments, error messages, redacted paths) a tenant's audit rows may still keep in full today.
// Implemented where the tenant's budgets are (src/budgets/audit-allowance.ts); the audit only asks.
export const AUDIT_TEXT_ALLOWANCE = Symbol('AuditTextAllowance');

export interface AuditTextAllowance {
  // Whether a row of the tenant may keep `bytes` of text in full; if so they are counted as kept.
  take(tenantId: string, bytes: number): boolean;
}

// What a row keeps of each text once the tenant's allowance for the day is spent: enough to say what was called
// and why it failed, small enough that a tenant calling at its rate limit adds little to the database.
export const PAST_ALLOWANCE_TEXT_BYTES = 256;
