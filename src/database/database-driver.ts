import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import type { DatabaseTarget } from '../config/app-config.js';
import type { DatabaseDriver } from './driver.js';

export type { DatabaseDriver, SqlSession } from './driver.js';

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
      (prepareAs === undefined ? await pool.query(sql, params) : await pool.query({ name: prepareAs, text: sql, values: params }))
        .rows as never[],
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
    newClient: (applicationName) =>
      new pg.Client({ connectionString: url, application_name: applicationName, keepAlive: true, connectionTimeoutMillis: 5_000 }),
    close: () => (closing ??= pool.end()),
  };
}
