// Migrates one template database per test run; each test file then clones it (see test-database.ts).
// Jest loads global setup outside its module mapper, so this file is plain JS on the compiled sources
// (`npm test` builds first).
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { createPostgresDriver } from '../../dist/database/database-driver.js';
import { wrapPglite } from '../../dist/database/pglite-driver.js';
import { migrate, MIGRATIONS_DIR, readMigrations } from '../../dist/database/migrator.js';

export const TEMPLATE_ENV = { pgTemplate: 'TOOLGATE_TEST_PG_TEMPLATE', pgliteDump: 'TOOLGATE_TEST_PGLITE_DUMP' };

export default async function globalSetup() {
  const migrations = await readMigrations(MIGRATIONS_DIR);
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (serverUrl) {
    const name = `toolgate_template_${randomBytes(6).toString('hex')}`;
    await serverQuery(serverUrl, `CREATE DATABASE "${name}"`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    const driver = createPostgresDriver(url.toString(), 1);
    await driver.withSession((session) => migrate(session, migrations));
    await driver.close();
    process.env[TEMPLATE_ENV.pgTemplate] = name;
    return;
  }
  const db = new PGlite();
  await wrapPglite(db, 'template').withSession((session) => migrate(session, migrations));
  const dump = await db.dumpDataDir('none');
  await db.close();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-pglite-'));
  const file = path.join(dir, 'template.tar');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  process.env[TEMPLATE_ENV.pgliteDump] = file;
}

export async function serverQuery(serverUrl, sql) {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
