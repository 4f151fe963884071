import { randomBytes } from 'node:crypto';
import { cp, readFile, rename, rm, stat } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { createPostgresDriver, type DatabaseDriver } from '../../src/database/database-driver.js';
import { wrapPglite } from '../../src/database/pglite-driver.js';

// Every test file gets a database of its own: on PostgreSQL when TEST_DATABASE_URL is set (a new
// database cloned from the migrated template the global setup made), else an in-memory PGlite
// loaded from the dump the global setup wrote (migrated, or an empty cluster).
export interface TestDatabase {
  driver: DatabaseDriver;
  // postgresql:// URL of the database (PostgreSQL only), for tests that open their own connections.
  url: string | null;
  close(): Promise<void>;
}

export const TEMPLATE_ENV = {
  pgTemplate: 'TOOLGATE_TEST_PG_TEMPLATE',
  pgliteDump: 'TOOLGATE_TEST_PGLITE_DUMP',
  pgliteEmptyDump: 'TOOLGATE_TEST_PGLITE_EMPTY_DUMP',
} as const;

export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const migrated = options.migrated ?? true;
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (serverUrl) return createPostgresDatabase(serverUrl, migrated ? process.env[TEMPLATE_ENV.pgTemplate] : undefined);
  const driver = wrapPglite(await createPglite({ migrated }), 'memory');
  return { driver, url: null, close: () => driver.close() };
}

// An in-memory PGlite, migrated or an empty cluster, loaded from the dumps the global setup made (a new
// cluster would cost 15-20 s of CPU each).
export async function createPglite({ migrated }: { migrated: boolean }): Promise<PGlite> {
  const dumpPath = process.env[migrated ? TEMPLATE_ENV.pgliteDump : TEMPLATE_ENV.pgliteEmptyDump];
  const db = dumpPath ? new PGlite({ loadDataDir: await readDump(dumpPath) }) : new PGlite();
  await db.waitReady;
  return db;
}

// DATABASE_URL for a service started as a child process on PGlite: a data directory on disk (`dir`, which
// must not exist yet) copied from the migrated dump, so the child starts without creating and migrating a
// cluster of its own (15-20 s of CPU). The dump is unpacked once beside it (about a second) and then copied.
export async function migratedPgliteUrl(dir: string): Promise<string> {
  const dumpPath = process.env[TEMPLATE_ENV.pgliteDump];
  if (!dumpPath) return 'pglite://memory';
  await cp(await unpackedDump(dumpPath), dir, { recursive: true });
  return `pglite://${dir}`;
}

// node_modules/.cache/toolgate-test/pglite-migrated-<key>-unpacked, made aside and renamed so that another
// worker never copies half of it; the global setup drops it with its dump.
async function unpackedDump(dumpPath: string): Promise<string> {
  const unpacked = dumpPath.replace(/\.tar\.gz$/, '-unpacked');
  if (
    await stat(unpacked).then(
      () => true,
      () => false,
    )
  )
    return unpacked;
  const partial = `${unpacked}.${process.pid}.${randomBytes(4).toString('hex')}`;
  const db = new PGlite({ dataDir: partial, loadDataDir: await readDump(dumpPath) });
  await db.waitReady;
  await db.close();
  await rename(partial, unpacked).catch(() => rm(partial, { recursive: true, force: true }));
  return unpacked;
}

// The global setup's dumps are gzipped tar files; the type tells PGlite to unzip.
async function readDump(dumpPath: string): Promise<Blob> {
  return new Blob([await readFile(dumpPath)], { type: 'application/gzip' });
}

export async function createPostgresDatabase(serverUrl: string, template?: string): Promise<TestDatabase> {
  const name = `toolgate_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`);
  const url = withDatabase(serverUrl, name);
  const driver = createPostgresDriver(url, 5);
  return {
    driver,
    url,
    async close() {
      await driver.close();
      await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}

export function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
