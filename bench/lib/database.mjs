import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { defer } from './cleanup.mjs';

// Where each service run keeps its data. With DATABASE_URL, every run gets a scratch database on that
// server (created here, dropped at the end) so the figures never depend on what the database held before;
// without it, a PGlite directory in the run's temp dir.
export async function databaseFactory(databaseUrl, tmpDir) {
  if (!databaseUrl) {
    return {
      kind: 'pglite',
      describe: 'PGlite (embedded, one data directory per service run)',
      async create(name) {
        const dir = path.join(tmpDir, `pglite-${name}`);
        return { url: `pglite://${dir}`, dir };
      },
    };
  }
  const server = new URL(databaseUrl);
  const runId = randomBytes(4).toString('hex');
  return {
    kind: 'postgres',
    describe: `PostgreSQL ${server.host} (scratch databases toolgate_bench_${runId}_*)`,
    async create(name) {
      const dbName = `toolgate_bench_${runId}_${name}`;
      await withClient(databaseUrl, (c) => c.query(`CREATE DATABASE "${dbName}"`));
      defer(`drop database ${dbName}`, () => withClient(databaseUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`)));
      const url = new URL(databaseUrl);
      url.pathname = `/${dbName}`;
      return { url: url.toString() };
    },
  };
}

// One short-lived connection for one piece of work.
export async function withClient(url, fn) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

// Projects inserted straight into the table (the API would take minutes for 100,000), then ANALYZE so the
// planner sees the table as it is, as autovacuum would soon make it on a real server.
const SEED_SQL = `
  INSERT INTO projects (id, tenant_id, name, slug, created_at, updated_at)
  SELECT gen_random_uuid(), $1::uuid, 'Seeded ' || g, 'seeded-' || g, now(), now()
  FROM generate_series(1, $2::int) AS g`;

// PGlite is single-process: the service holding the data directory must be stopped first.
export async function seedProjects(database, tenantId, count) {
  if (database.dir) {
    const { PGlite } = await import('@electric-sql/pglite');
    const db = new PGlite(database.dir);
    try {
      await db.query(SEED_SQL, [tenantId, count]);
      await db.exec('ANALYZE projects');
      return (await db.query('SELECT count(*)::int AS n FROM projects')).rows[0].n;
    } finally {
      await db.close();
    }
  }
  return withClient(database.url, async (c) => {
    await c.query(SEED_SQL, [tenantId, count]);
    await c.query('ANALYZE projects');
    return (await c.query('SELECT count(*)::int AS n FROM projects')).rows[0].n;
  });
}
