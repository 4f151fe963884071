import { Inject, Injectable } from '@nestjs/common';
import { DATABASE_DRIVER, type DatabaseDriver } from '../database/database-driver.js';
import type { Prisma } from '../generated/prisma/client.js';

// A key belongs to the API key that sent it: another key of the tenant (a narrower one, say) can neither
// replay its answers, nor pre-claim a key it expects it to use, nor learn that it used one.
export interface IdempotencyScope {
  tenantId: string;
  projectId: string;
  apiKeyId: string;
  key: string;
}

// The key column holds the sending API key's id before the client's key.
const storedKey = (scope: IdempotencyScope) => `${scope.apiKeyId}:${scope.key}`;

export interface StoredIdempotencyKey {
  fingerprint: string;
  state: 'running' | 'done';
  outcome: unknown;
}

// Plain SQL on the driver: the claim is one INSERT ... ON CONFLICT whose WHERE decides atomically who
// runs the call, which Prisma's upsert cannot express.
@Injectable()
export class IdempotencyRepository {
  constructor(@Inject(DATABASE_DRIVER) private readonly driver: DatabaseDriver) {}

  // True when this request now owns the key: it was free, expired, or left running past its lease by a
  // request with the same call that never finished (a crashed instance).
  async claim(scope: IdempotencyScope, fingerprint: string, ttlMs: number, leaseMs: number): Promise<boolean> {
    const rows = await this.driver.query(
      `INSERT INTO idempotency_keys (tenant_id, project_id, key, fingerprint, state, outcome, created_at, locked_until, expires_at)
       VALUES ($1, $2, $3, $4, 'running', NULL, now(), now() + $6 * interval '1 millisecond', now() + $5 * interval '1 millisecond')
       ON CONFLICT (tenant_id, project_id, key) DO UPDATE
         SET fingerprint = EXCLUDED.fingerprint, state = 'running', outcome = NULL, created_at = EXCLUDED.created_at,
             locked_until = EXCLUDED.locked_until, expires_at = EXCLUDED.expires_at
         WHERE idempotency_keys.expires_at <= now()
            OR (idempotency_keys.state = 'running' AND idempotency_keys.locked_until <= now()
                AND idempotency_keys.fingerprint = EXCLUDED.fingerprint)
       RETURNING key`,
      [scope.tenantId, scope.projectId, storedKey(scope), fingerprint, ttlMs, leaseMs],
    );
    return rows.length > 0;
  }

  async find(scope: IdempotencyScope): Promise<StoredIdempotencyKey | null> {
    const rows = await this.driver.query<{ fingerprint: string; state: 'running' | 'done'; outcome: string | null }>(
      `SELECT fingerprint, state, outcome FROM idempotency_keys
       WHERE tenant_id = $1 AND project_id = $2 AND key = $3 AND expires_at > now()`,
      [scope.tenantId, scope.projectId, storedKey(scope)],
    );
    const row = rows[0];
    return row
      ? { fingerprint: row.fingerprint, state: row.state, outcome: row.outcome === null ? null : (JSON.parse(row.outcome) as unknown) }
      : null;
  }

  // `outcome`: the answer's JSON text, written by the caller within its caps.
  async complete(scope: IdempotencyScope, outcome: string): Promise<void> {
    await this.driver.query(
      `UPDATE idempotency_keys SET state = 'done', outcome = $4 WHERE tenant_id = $1 AND project_id = $2 AND key = $3`,
      [scope.tenantId, scope.projectId, storedKey(scope), outcome],
    );
  }

  // The same, inside a transaction holding the tenant's row lock (its stored-answer budget is checked there).
  async completeLocked(tx: Prisma.TransactionClient, scope: IdempotencyScope, outcome: string): Promise<void> {
    await tx.$executeRaw`UPDATE idempotency_keys SET state = 'done', outcome = ${outcome}
      WHERE tenant_id = ${scope.tenantId}::uuid AND project_id = ${scope.projectId}::uuid AND key = ${storedKey(scope)}`;
  }

  async release(scope: IdempotencyScope): Promise<void> {
    await this.driver.query(`DELETE FROM idempotency_keys WHERE tenant_id = $1 AND project_id = $2 AND key = $3 AND state = 'running'`, [
      scope.tenantId,
      scope.projectId,
      storedKey(scope),
    ]);
  }

  // One bounded batch of expired rows; the caller repeats while a batch comes back full.
  async deleteExpired(limit: number): Promise<number> {
    const rows = await this.driver.query(
      `DELETE FROM idempotency_keys WHERE (tenant_id, project_id, key) IN (
         SELECT tenant_id, project_id, key FROM idempotency_keys WHERE expires_at <= now() LIMIT $1)
       RETURNING 1`,
      [limit],
    );
    return rows.length;
  }
}
