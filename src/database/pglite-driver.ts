import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { DatabaseDriver } from './driver.js';

// The embedded database, in its own module so that a service on PostgreSQL never loads it.
export async function createPgliteDriver(dataDir: string | null): Promise<DatabaseDriver> {
  if (dataDir) await mkdir(dataDir, { recursive: true });
  return wrapPglite(dataDir ? new PGlite(dataDir) : new PGlite(), dataDir ?? 'memory');
}

// Tests hand in a PGlite cloned from a migrated template, so each test file skips the 4 s cold start.
export function wrapPglite(db: PGlite, location: string): DatabaseDriver {
  // One connection: a session is the database itself.
  const query = async <T>(sql: string, params?: unknown[]) => (await db.query(sql, params)).rows as T[];
  return {
    kind: 'pglite',
    description: `pglite ${location}`,
    adapter: new PrismaPGlite(db),
    query,
    withSession: (fn) => fn({ query, exec: async (sql) => void (await db.exec(sql)) }),
    close: () => (db.closed ? Promise.resolve() : db.close()),
  };
}
