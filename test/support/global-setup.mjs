// Migrates one template database per test run (PostgreSQL), or finds the migrated PGlite dump of earlier runs
// (else makes it); each test file then clones it (see test-database.ts).
// Jest loads global setup outside its module mapper, so this file is plain JS on the compiled sources
// (`npm test` builds first).
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { createPostgresDriver } from '../../dist/database/database-driver.js';
import { wrapPglite } from '../../dist/database/pglite-driver.js';
import { migrate, MIGRATIONS_DIR, readMigrations } from '../../dist/database/migrator.js';

export const TEMPLATE_ENV = { pgTemplate: 'TOOLGATE_TEST_PG_TEMPLATE', pgliteDump: 'TOOLGATE_TEST_PGLITE_DUMP', pgliteEmptyDump: 'TOOLGATE_TEST_PGLITE_EMPTY_DUMP' };

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
  const dumps = await pgliteTemplates(migrations);
  process.env[TEMPLATE_ENV.pgliteDump] = dumps.migrated;
  process.env[TEMPLATE_ENV.pgliteEmptyDump] = dumps.empty;
}

// Two PGlite data directories as gzipped tar dumps, an empty cluster and the same migrated, kept between runs
// in node_modules/.cache under a key of the migrations and the PGlite version: creating a cluster costs PGlite
// 15-20 s of CPU, loading a dump under a second.
const PGLITE_CACHE = path.resolve(import.meta.dirname, '../../node_modules/.cache/toolgate-test');
// Bump when what the dumps hold changes other than through the migrations.
const TEMPLATE_FORMAT = 3;
const STALE_DUMP_MS = 86_400_000;

async function pgliteTemplates(migrations) {
  const pgliteVersion = JSON.parse(await readFile(path.resolve(import.meta.dirname, '../../node_modules/@electric-sql/pglite/package.json'), 'utf8')).version;
  const key = createHash('sha256')
    .update(JSON.stringify({ format: TEMPLATE_FORMAT, pgliteVersion, migrations: migrations.map((m) => [m.name, m.checksum]) }))
    .digest('hex')
    .slice(0, 16);
  const files = { empty: path.join(PGLITE_CACHE, `pglite-empty-${key}.tar.gz`), migrated: path.join(PGLITE_CACHE, `pglite-migrated-${key}.tar.gz`) };
  const cached = async (file) => stat(file).then((s) => s.size > 0, () => false);
  if ((await cached(files.empty)) && (await cached(files.migrated))) return files;
  await mkdir(PGLITE_CACHE, { recursive: true });
  const db = new PGlite();
  // The tests use the postgres database only: template0 and template1 are three fifths of the files every
  // test database would otherwise unpack.
  await db.exec(`UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')`);
  await db.exec('DROP DATABASE template0');
  await db.exec('DROP DATABASE template1');
  // Every start of a database sets up its whole buffer pool, PostgreSQL's 128 MB by default, which was most
  // of the start's CPU (a second or more per test database on a busy machine); a test database holds a few
  // megabytes. The setting travels in the dump (postgresql.auto.conf), so services started on an unpacked
  // dump get it too.
  await db.exec(`ALTER SYSTEM SET shared_buffers = '16MB'`);
  await db.exec('CHECKPOINT');
  // Gzipped: most of a dump is the zeroed rest of its 16 MB WAL segment, and a loader copies the dump
  // whole more than once before unpacking it.
  await keep(files.empty, await db.dumpDataDir('gzip'));
  await wrapPglite(db, 'template').withSession((session) => migrate(session, migrations));
  await db.exec('CHECKPOINT');
  await keep(files.migrated, await db.dumpDataDir('gzip'));
  await db.close();
  // Dumps of other migration sets are dropped once nobody has made one for a day: checkouts of other
  // branches sharing this cache (worktrees with one node_modules) may be running on theirs right now.
  const current = new Set(Object.values(files).map((f) => path.basename(f)));
  for (const name of await readdir(PGLITE_CACHE)) {
    if (!/^pglite-(empty|migrated)-[0-9a-f]+\.tar(\.gz)?$/.test(name) || current.has(name)) continue;
    const file = path.join(PGLITE_CACHE, name);
    const made = await stat(file).then((s) => s.mtimeMs, () => Date.now());
    if (Date.now() - made > STALE_DUMP_MS) await rm(file, { force: true });
  }
  return files;
}

// Written aside and renamed, so a run in another worktree never reads half a file.
async function keep(file, dump) {
  const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
  await rename(partial, file);
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
