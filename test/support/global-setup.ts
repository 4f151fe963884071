import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createPostgresDriver, wrapPglite } from '../../src/database/database-driver.js';
import { migrate, MIGRATIONS_DIR, readMigrations } from '../../src/database/migrator.js';
import { adminQuery, TEMPLATE_ENV, withDatabase } from './test-database.js';

// Migrates one template database per run; each test file then clones it (see test-database.ts).
export default async function globalSetup(): Promise<void> {
  const migrations = await readMigrations(MIGRATIONS_DIR);
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (serverUrl) {
    const name = `toolgate_template_${randomBytes(6).toString('hex')}`;
    await adminQuery(serverUrl, `CREATE DATABASE "${name}"`);
    const driver = createPostgresDriver(withDatabase(serverUrl, name), 1);
    await driver.withSession((session) => migrate(session, migrations));
    await driver.close();
    process.env[TEMPLATE_ENV.pgTemplate] = name;
    return;
  }
  const db = new PGlite();
  await driver(db).withSession((session) => migrate(session, migrations));
  const dump = await db.dumpDataDir('none');
  await db.close();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-pglite-'));
  const file = path.join(dir, 'template.tar');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  process.env[TEMPLATE_ENV.pgliteDump] = file;
}

const driver = (db: PGlite) => wrapPglite(db, 'template');
