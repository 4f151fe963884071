// Migrates one template database per test run (PostgreSQL), or finds the migrated PGlite dump of earlier runs
// (else makes it); each test file then clones it (see test-database.ts).
// Jest loads global setup outside its module mapper, so this file is plain JS on the compiled sources
// (`npm test` builds first).
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { createPostgresDriver } from '../../dist/database/database-driver.js';
import { wrapPglite } from '../../dist/database/pglite-driver.js';
import { migrate, MIGRATIONS_DIR, readMigrations } from '../../dist/database/migrator.js';

export const TEMPLATE_ENV = {
  pgTemplate: 'TOOLGATE_TEST_PG_TEMPLATE',
  pgliteDump: 'TOOLGATE_TEST_PGLITE_DUMP',
  pgliteEmptyDump: 'TOOLGATE_TEST_PGLITE_EMPTY_DUMP',
};

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
const TEMPLATE_FORMAT = 4;
const STALE_DUMP_MS = 86_400_000;

async function pgliteTemplates(migrations) {
  const pgliteVersion = JSON.parse(
    await readFile(path.resolve(import.meta.dirname, '../../node_modules/@electric-sql/pglite/package.json'), 'utf8'),
  ).version;
  const key = createHash('sha256')
    .update(JSON.stringify({ format: TEMPLATE_FORMAT, pgliteVersion, migrations: migrations.map((m) => [m.name, m.checksum]) }))
    .digest('hex')
    .slice(0, 16);
  const files = {
    empty: path.join(PGLITE_CACHE, `pglite-empty-${key}.tar.gz`),
    migrated: path.join(PGLITE_CACHE, `pglite-migrated-${key}.tar.gz`),
  };
  const cached = async (file) =>
    stat(file).then(
      (s) => s.size > 0,
      () => false,
    );
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
  // Segments the last checkpoint no longer needs are deleted, not renamed for reuse (see walDump).
  await db.exec(`ALTER SYSTEM SET wal_recycle = off`);
  await db.exec('SELECT pg_reload_conf()');
  await keep(files.empty, await walDump(db));
  await wrapPglite(db, 'template').withSession((session) => migrate(session, migrations));
  await keep(files.migrated, await walDump(db));
  await db.close();
  // Dumps of other migration sets are dropped once nobody has made one for a day: checkouts of other
  // branches sharing this cache (worktrees with one node_modules) may be running on theirs right now.
  const current = new Set(Object.values(files).map((f) => path.basename(f)));
  for (const name of await readdir(PGLITE_CACHE)) {
    // The dumps, the migrated one unpacked for services started as child processes (test-database.ts), and
    // what a run stopped while writing them left.
    const dump = /^(pglite-(?:empty|migrated)-[0-9a-f]+)(?:\.tar(?:\.gz)?|-unpacked)(?:\.\d+\.[0-9a-f]{8})?$/.exec(name)?.[1];
    if (!dump || current.has(`${dump}.tar.gz`)) continue;
    const file = path.join(PGLITE_CACHE, name);
    const made = await stat(file).then(
      (s) => s.mtimeMs,
      () => Date.now(),
    );
    if (Date.now() - made > STALE_DUMP_MS) await rm(file, { recursive: true, force: true });
  }
  return files;
}

// The data directory as a gzipped tar holding only the WAL a start reads. A loader reads the whole tar (it
// parses it, copies every file's bytes and writes them into PGlite's in-memory file system), and WAL was most
// of it: a 16 MB segment half filled by initdb and the migrations, the zeroed rest, and the next segment made
// ahead. After a switch to a fresh segment and a checkpoint, a clean start reads only the checkpoint record,
// at the head of the new segment: that segment is cut after the page of the last record and the others are
// left out. PostgreSQL writes on from there and makes later segments itself. 43 MB of tar became 9 MB, and a
// database's load went from 0.7-0.9 s of CPU to 0.5-0.6 s.
async function walDump(db) {
  await db.exec('SELECT pg_switch_wal()');
  await db.exec('CHECKPOINT');
  const { rows } = await db.query(
    `SELECT file_name, file_offset, current_setting('wal_block_size')::int AS page FROM pg_walfile_name_offset(pg_current_wal_insert_lsn())`,
  );
  const { file_name: current, file_offset: offset, page } = rows[0];
  const tar = new Uint8Array(await (await db.dumpDataDir('none')).arrayBuffer());
  const kept = rewriteTar(tar, (name, data) => {
    const segment = /(?:^|\/)pg_wal\/([0-9A-F]{24})$/.exec(name)?.[1];
    if (!segment) return data;
    return segment === current ? data.subarray(0, Math.ceil((offset + 1) / page) * page) : null;
  });
  return new Blob([gzipSync(kept)], { type: 'application/gzip' });
}

// Copies a ustar archive entry by entry; `edit` returns an entry's new bytes, or null to leave it out.
function rewriteTar(tar, edit) {
  const parts = [];
  const text = (from, to) => new TextDecoder('latin1').decode(tar.subarray(from, to)).replace(/\0.*$/s, '');
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0;) {
    const header = tar.slice(at, at + 512);
    const size = parseInt(text(at + 124, at + 136).trim() || '0', 8);
    const name = text(at + 345, at + 500) ? `${text(at + 345, at + 500)}/${text(at, at + 100)}` : text(at, at + 100);
    const data = tar.subarray(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;
    const edited = edit(name, data);
    if (edited === null) continue;
    if (edited.length !== size) {
      header.set(new TextEncoder().encode(`${edited.length.toString(8).padStart(11, '0')}\0`), 124);
      header.fill(0x20, 148, 156);
      const sum = header.reduce((total, byte) => total + byte, 0);
      header.set(new TextEncoder().encode(`${sum.toString(8).padStart(6, '0')}\0 `), 148);
    }
    parts.push(header, edited, new Uint8Array(Math.ceil(edited.length / 512) * 512 - edited.length));
  }
  parts.push(new Uint8Array(1024));
  return Buffer.concat(parts);
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
