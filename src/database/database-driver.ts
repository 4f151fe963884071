import { PrismaPg } from '@prisma/adapter-pg';
import type { PrismaPGlite } from 'pglite-prisma-adapter';
import pg from 'pg';
import type { DatabaseTarget } from '../config/app-config.js';

// One connection's worth of raw SQL, for the migrator (its advisory lock must stay on one session).
export interface SqlSession {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  // Runs a script of several statements (simple query protocol, no parameters).
  exec(sql: string): Promise<void>;
}

type PrismaAdapterFactory = PrismaPg | PrismaPGlite;

// The database behind Prisma: PostgreSQL through a pg pool, or embedded PGlite in-process.
export interface DatabaseDriver {
  readonly kind: DatabaseTarget['kind'];
  // Where the data lives, for logs (no password).
  readonly description: string;
  readonly adapter: PrismaAdapterFactory;
  // One statement straight to the driver, for the hottest write (the audit batch): Prisma's query compiler
  // costs more than the statement itself there. PGlite runs it after any transaction in progress.
  // `prepareAs`: on PostgreSQL the statement is prepared once per connection under this name and then only
  // bound and executed (no parse and plan per call); the text must then be the same on every call.
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], prepareAs?: string): Promise<T[]>;
  withSession<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  // PostgreSQL only: a new connection outside the pool, owned by the caller (the change bus's LISTEN).
  newClient?(applicationName: string): pg.Client;
  close(): Promise<void>;
}

export const DATABASE_DRIVER = Symbol('DATABASE_DRIVER');

export async function createDatabaseDriver(target: DatabaseTarget): Promise<DatabaseDriver> {
  if (target.kind === 'postgres') return createPostgresDriver(target.url);
  // PGlite and its adapter are loaded only when used: about 11 MB of a service on PostgreSQL otherwise.
  const { createPgliteDriver } = await import('./pglite-driver.js');
  return createPgliteDriver(target.dataDir);
}

export function createPostgresDriver(url: string, poolSize = 10): DatabaseDriver {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5_000 });
  // An idle client losing its server (restart, network cut) must not crash the process.
  pool.on('error', () => undefined);
  const safeUrl = new URL(url);
  safeUrl.password = '';
  let closing: Promise<void> | null = null;
  return {
    kind: 'postgres',
    description: `postgresql ${safeUrl.host}${safeUrl.pathname}`,
    adapter: new PrismaPg(pool),
    query: async (sql, params, prepareAs) =>
      (prepareAs === undefined ? await pool.query(sql, params) : await pool.query({ name: prepareAs, text: sql, values: params })).rows as never[],
    async withSession(fn) {
      const client = await pool.connect();
      try {
        return await fn({
          query: async (sql, params) => (await client.query(sql, params)).rows as never[],
          exec: async (sql) => void (await client.query(sql)),
        });
      } finally {
        client.release();
      }
    },
    newClient: (applicationName) => new pg.Client({ connectionString: url, application_name: applicationName, keepAlive: true, connectionTimeoutMillis: 5_000 }),
    close: () => (closing ??= pool.end()),
  };
}
