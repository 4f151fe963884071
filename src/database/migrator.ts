import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlSession } from './database-driver.js';

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationReport {
  applied: string[];
  alreadyApplied: string[];
  // In the database but not on disk: a newer release ran here, or a file was removed.
  unknown: string[];
}

export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationError';
  }
}

// Prisma Migrate's own lock key and table, so `prisma migrate deploy` can take over where its engine exists.
const ADVISORY_LOCK_KEY = 72707369;

const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export async function readMigrations(dir: string): Promise<MigrationFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const bytes = await readFile(path.join(dir, name, 'migration.sql'));
      return { name, sql: bytes.toString('utf8'), checksum: createHash('sha256').update(bytes).digest('hex') };
    }),
  );
}

// Applies pending migrations in name order, each in its own transaction, under an advisory lock so
// that instances starting together apply each migration once. Refuses to go on when an applied
// migration's file changed or an earlier attempt failed half-way.
export async function migrate(session: SqlSession, migrations: MigrationFile[]): Promise<MigrationReport> {
  await session.query('SELECT pg_advisory_lock($1)', [ADVISORY_LOCK_KEY]);
  try {
    await session.exec(CREATE_MIGRATIONS_TABLE);
    const rows = await session.query<AppliedRow>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at',
    );
    const live = rows.filter((r) => r.rolled_back_at === null);
    const failed = live.find((r) => r.finished_at === null);
    if (failed) {
      throw new MigrationError(
        `Migration ${failed.migration_name} failed earlier and was not rolled back; fix the database, then mark it rolled back in _prisma_migrations`,
      );
    }
    const appliedByName = new Map(live.map((r) => [r.migration_name, r]));
    const report: MigrationReport = {
      applied: [],
      alreadyApplied: [],
      unknown: [...appliedByName.keys()].filter((name) => !migrations.some((m) => m.name === name)),
    };
    for (const migration of migrations) {
      const applied = appliedByName.get(migration.name);
      if (applied) {
        if (applied.checksum !== migration.checksum) {
          throw new MigrationError(
            `Migration ${migration.name} was changed after it was applied (checksum ${applied.checksum.slice(0, 12)}… in the database, ${migration.checksum.slice(0, 12)}… on disk); write a new migration instead of editing an applied one`,
          );
        }
        report.alreadyApplied.push(migration.name);
        continue;
      }
      await applyOne(session, migration);
      report.applied.push(migration.name);
    }
    return report;
  } finally {
    await session.query('SELECT pg_advisory_unlock($1)', [ADVISORY_LOCK_KEY]);
  }
}

async function applyOne(session: SqlSession, migration: MigrationFile): Promise<void> {
  await session.exec('BEGIN');
  try {
    await session.exec(migration.sql);
    await session.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), now(), 1)`,
      [randomUUID(), migration.checksum, migration.name],
    );
    await session.exec('COMMIT');
  } catch (error) {
    await session.exec('ROLLBACK');
    const reason = error instanceof Error ? error.message : String(error);
    throw new MigrationError(`Migration ${migration.name} failed and was rolled back: ${reason}`);
  }
}

// src/database and dist/database both sit two levels below the project root.
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));
