import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createPostgresDriver, type DatabaseDriver } from '../../src/database/database-driver.js';
import { migrate, MigrationError, type MigrationFile, MIGRATIONS_DIR, readMigrations } from '../../src/database/migrator.js';
import { createTestApp } from '../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MIGRATE_CLI = path.join(ROOT, 'dist/database/migrate.cli.js');
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

interface MigrationRow {
  id: string;
  checksum: string;
  migration_name: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  started_at: Date;
  logs: string | null;
  applied_steps_count: number;
}

const migrationRows = (driver: DatabaseDriver) =>
  driver.withSession((s) => s.query<MigrationRow>('SELECT * FROM "_prisma_migrations" ORDER BY migration_name'));

const runMigrations = (driver: DatabaseDriver, migrations: MigrationFile[]) =>
  driver.withSession((session) => migrate(session, migrations));

const tableExists = async (driver: DatabaseDriver, table: string) => {
  const [row] = await driver.withSession((s) =>
    s.query<{ oid: string | null }>('SELECT to_regclass($1)::text AS oid', [`public.${table}`]),
  );
  return row.oid !== null;
};

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

// A migrations folder of our own, so a test can edit or break files without touching prisma/migrations.
async function migrationsFolder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-migrations-'));
  await writeMigrations(dir, files);
  return dir;
}

async function writeMigrations(dir: string, files: Record<string, string>): Promise<void> {
  for (const [name, sql] of Object.entries(files)) {
    await mkdir(path.join(dir, name), { recursive: true });
    await writeFile(path.join(dir, name, 'migration.sql'), sql);
  }
}

describe('migrator', () => {
  let database: TestDatabase;
  let tmpDir: string | null = null;

  beforeEach(async () => {
    database = await createTestDatabase({ migrated: false });
  });

  afterEach(async () => {
    await database.close();
    if (tmpDir) await rm(tmpDir, { recursive: true, force: true });
    tmpDir = null;
  });

  it('applies every migration once and records it as Prisma Migrate does; a second run applies nothing', async () => {
    const migrations = await readMigrations(MIGRATIONS_DIR);
    const names = migrations.map((m) => m.name);
    expect(names.length).toBeGreaterThan(0);

    const first = await runMigrations(database.driver, migrations);
    expect(first).toEqual({ applied: names, alreadyApplied: [], unknown: [] });
    const rowsAfterFirst = await migrationRows(database.driver);

    const second = await runMigrations(database.driver, migrations);
    expect(second).toEqual({ applied: [], alreadyApplied: names, unknown: [] });

    const rows = await migrationRows(database.driver);
    expect(rows).toEqual(rowsAfterFirst);
    expect(rows.map((r) => r.migration_name)).toEqual(names);
    for (const row of rows) {
      const fileBytes = await readFile(path.join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
      expect(row.checksum).toMatch(/^[0-9a-f]{64}$/);
      expect(row.checksum).toBe(sha256(fileBytes));
      expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.started_at).toBeInstanceOf(Date);
      expect(row.rolled_back_at).toBeNull();
      expect(row.logs).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }
  });

  it("creates _prisma_migrations with Prisma Migrate's columns, so `prisma migrate deploy` can take over", async () => {
    await runMigrations(database.driver, await readMigrations(MIGRATIONS_DIR));
    const columns = await database.driver.withSession((s) =>
      s.query<{ column_name: string; udt_name: string; is_nullable: string; character_maximum_length: number | null }>(
        `SELECT column_name, udt_name, is_nullable, character_maximum_length
           FROM information_schema.columns
          WHERE table_schema = 'public' AND table_name = '_prisma_migrations'
          ORDER BY column_name`,
      ),
    );
    expect(columns).toEqual([
      { column_name: 'applied_steps_count', udt_name: 'int4', is_nullable: 'NO', character_maximum_length: null },
      { column_name: 'checksum', udt_name: 'varchar', is_nullable: 'NO', character_maximum_length: 64 },
      { column_name: 'finished_at', udt_name: 'timestamptz', is_nullable: 'YES', character_maximum_length: null },
      { column_name: 'id', udt_name: 'varchar', is_nullable: 'NO', character_maximum_length: 36 },
      { column_name: 'logs', udt_name: 'text', is_nullable: 'YES', character_maximum_length: null },
      { column_name: 'migration_name', udt_name: 'varchar', is_nullable: 'NO', character_maximum_length: 255 },
      { column_name: 'rolled_back_at', udt_name: 'timestamptz', is_nullable: 'YES', character_maximum_length: null },
      { column_name: 'started_at', udt_name: 'timestamptz', is_nullable: 'NO', character_maximum_length: null },
    ]);
  });

  it('refuses to migrate when an applied migration file was changed, naming it, and applies nothing after it', async () => {
    tmpDir = await migrationsFolder({
      '20260101000000_widgets': 'CREATE TABLE widgets (id integer PRIMARY KEY);\n',
    });
    await runMigrations(database.driver, await readMigrations(tmpDir));
    await writeMigrations(tmpDir, {
      '20260101000000_widgets': 'CREATE TABLE widgets (id integer PRIMARY KEY, name text);\n',
      '20260102000000_gadgets': 'CREATE TABLE gadgets (id integer PRIMARY KEY);\n',
    });

    const attempt = runMigrations(database.driver, await readMigrations(tmpDir));

    await expect(attempt).rejects.toThrow(MigrationError);
    await expect(attempt).rejects.toThrow(/Migration 20260101000000_widgets was changed after it was applied/);
    expect(await tableExists(database.driver, 'gadgets')).toBe(false);
    expect((await migrationRows(database.driver)).map((r) => r.migration_name)).toEqual(['20260101000000_widgets']);
  });

  it('rolls a failing migration back entirely, records it nowhere, and applies it once it is fixed', async () => {
    tmpDir = await migrationsFolder({
      '20260101000000_widgets': 'CREATE TABLE widgets (id integer PRIMARY KEY);\n',
      '20260102000000_broken': 'CREATE TABLE half_done (id integer PRIMARY KEY);\nSELECT * FROM no_such_table;\n',
    });

    const attempt = runMigrations(database.driver, await readMigrations(tmpDir));

    await expect(attempt).rejects.toThrow(MigrationError);
    await expect(attempt).rejects.toThrow(/Migration 20260102000000_broken failed and was rolled back: .*no_such_table/);
    expect(await tableExists(database.driver, 'widgets')).toBe(true);
    expect(await tableExists(database.driver, 'half_done')).toBe(false);
    expect((await migrationRows(database.driver)).map((r) => r.migration_name)).toEqual(['20260101000000_widgets']);

    await writeMigrations(tmpDir, { '20260102000000_broken': 'CREATE TABLE half_done (id integer PRIMARY KEY);\n' });
    const report = await runMigrations(database.driver, await readMigrations(tmpDir));
    expect(report).toEqual({ applied: ['20260102000000_broken'], alreadyApplied: ['20260101000000_widgets'], unknown: [] });
    expect(await tableExists(database.driver, 'half_done')).toBe(true);
  });

  it('refuses to migrate past a migration that failed half-way and was not rolled back, until it is marked rolled back', async () => {
    tmpDir = await migrationsFolder({
      '20260101000000_widgets': 'CREATE TABLE widgets (id integer PRIMARY KEY);\n',
    });
    await runMigrations(database.driver, await readMigrations(tmpDir));
    // What Prisma Migrate leaves behind when a migration fails outside a transaction.
    await database.driver.withSession((s) =>
      s.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, logs, applied_steps_count)
         VALUES ('00000000-0000-4000-8000-000000000001', $1, '20260102000000_gadgets', now(), NULL, 'boom', 0)`,
        ['0'.repeat(64)],
      ),
    );
    await writeMigrations(tmpDir, { '20260102000000_gadgets': 'CREATE TABLE gadgets (id integer PRIMARY KEY);\n' });
    const migrations = await readMigrations(tmpDir);

    const attempt = runMigrations(database.driver, migrations);
    await expect(attempt).rejects.toThrow(MigrationError);
    await expect(attempt).rejects.toThrow(
      /Migration 20260102000000_gadgets failed earlier and was not rolled back; fix the database, then mark it rolled back/,
    );
    expect(await tableExists(database.driver, 'gadgets')).toBe(false);

    await database.driver.withSession((s) => s.query(`UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE finished_at IS NULL`));
    const report = await runMigrations(database.driver, migrations);
    expect(report.applied).toEqual(['20260102000000_gadgets']);
    expect(await tableExists(database.driver, 'gadgets')).toBe(true);
  });

  it('reports migrations the database has but this build does not know', async () => {
    tmpDir = await migrationsFolder({
      '20260101000000_widgets': 'CREATE TABLE widgets (id integer PRIMARY KEY);\n',
      '20260102000000_gadgets': 'CREATE TABLE gadgets (id integer PRIMARY KEY);\n',
    });
    const all = await readMigrations(tmpDir);
    await runMigrations(database.driver, all);

    const report = await runMigrations(database.driver, all.slice(0, 1));

    expect(report).toEqual({ applied: [], alreadyApplied: ['20260101000000_widgets'], unknown: ['20260102000000_gadgets'] });
  });

  it('gives the audit rows of calls parked before callers were recorded the key that parked them', async () => {
    const migrations = await readMigrations(MIGRATIONS_DIR);
    const at = migrations.findIndex((m) => m.name.endsWith('_invocation_caller'));
    await runMigrations(database.driver, migrations.slice(0, at));
    const [tenant, key, project, parked, plain] = ['10', '20', '30', '40', '50'].map((n) => `00000000-0000-4000-8000-0000000000${n}`);
    const startedAt = '2026-11-20T10:00:00.000Z';
    await database.driver.withSession(async (s) => {
      await s.exec(`CREATE TABLE "invocations_p20261120" PARTITION OF "invocations" FOR VALUES FROM ('2026-11-20') TO ('2026-11-21')`);
      await s.query(`INSERT INTO tenants (id, name, updated_at) VALUES ($1, 'acme', now())`, [tenant]);
      await s.query(
        `INSERT INTO api_keys (id, tenant_id, name, prefix, key_hash, role) VALUES ($1, $2, 'coder', 'abc', '\\x00', 'agent')`,
        [key, tenant],
      );
      await s.query(`INSERT INTO projects (id, tenant_id, name, slug, updated_at) VALUES ($1, $2, 'p', 'p', now())`, [project, tenant]);
      await s.query(
        `INSERT INTO parked_calls (id, tenant_id, project_id, tool, channel, timeout_ms, status, started_at, expires_at, requested_by_key_id)
         VALUES ($1, $2, $3, 'write_file', 'rest', 1000, 'pending', $4, $4::timestamptz + interval '1 hour', $5)`,
        [parked, tenant, project, startedAt, key],
      );
      for (const [id, status] of [
        [parked, 'pending_approval'],
        [plain, 'ok'],
      ]) {
        await s.query(
          `INSERT INTO invocations (id, tenant_id, project_id, tool, status, duration_ms, started_at, finished_at)
           VALUES ($1, $2, $3, 'write_file', $4, 0, $5, $5)`,
          [id, tenant, project, status, startedAt],
        );
      }
    });

    expect((await runMigrations(database.driver, migrations)).applied).toEqual(migrations.slice(at).map((m) => m.name));

    const rows = await database.driver.withSession((s) =>
      s.query<{ id: string; caller_key_id: string | null; caller_name: string | null }>(
        'SELECT id, caller_key_id, caller_name FROM invocations ORDER BY id',
      ),
    );
    // A row of a call that was not parked names nobody: who made it was never stored.
    expect(rows).toEqual([
      { id: parked, caller_key_id: key, caller_name: 'coder' },
      { id: plain, caller_key_id: null, caller_name: null },
    ]);
    const [call] = await database.driver.withSession((s) =>
      s.query<{ requested_by_name: string }>('SELECT requested_by_name FROM parked_calls'),
    );
    expect(call.requested_by_name).toBe('coder');
  });

  (onPostgres ? it : it.skip)(
    'two migrators starting together apply each migration exactly once (PostgreSQL only: PGlite is a single in-process connection)',
    async () => {
      tmpDir = await migrationsFolder({
        // The sleep keeps the first migrator inside its lock while the second one arrives.
        '20260101000000_widgets': 'SELECT pg_sleep(0.5);\nCREATE TABLE widgets (id integer PRIMARY KEY);\n',
        '20260102000000_gadgets': 'CREATE TABLE gadgets (id integer PRIMARY KEY);\n',
      });
      const migrations = await readMigrations(tmpDir);
      const names = migrations.map((m) => m.name);
      const drivers = [createPostgresDriver(database.url!, 1), createPostgresDriver(database.url!, 1)];
      try {
        const reports = await Promise.all(drivers.map((driver) => runMigrations(driver, migrations)));

        const applied = reports.flatMap((r) => r.applied).sort();
        expect(applied).toEqual(names);
        expect(reports.map((r) => r.applied.length + r.alreadyApplied.length)).toEqual([names.length, names.length]);
        const counts = await database.driver.withSession((s) =>
          s.query<{ migration_name: string; n: number }>(
            'SELECT migration_name, count(*)::int AS n FROM "_prisma_migrations" GROUP BY migration_name ORDER BY migration_name',
          ),
        );
        expect(counts).toEqual(names.map((migration_name) => ({ migration_name, n: 1 })));
      } finally {
        await Promise.all(drivers.map((d) => d.close()));
      }
    },
  );
});

describe('the app at start-up', () => {
  it('refuses to start when an applied migration differs from its file, naming the migration', async () => {
    const database = await createTestDatabase();
    try {
      const [migration] = await readMigrations(MIGRATIONS_DIR);
      await database.driver.withSession((s) =>
        s.query('UPDATE "_prisma_migrations" SET checksum = $1 WHERE migration_name = $2', ['f'.repeat(64), migration.name]),
      );

      await expect(createTestApp({ database })).rejects.toThrow(new RegExp(`Migration ${migration.name} was changed after it was applied`));
    } finally {
      await database.close();
    }
  });
});

describe('npm run db:migrate (compiled CLI)', () => {
  const exec = promisify(execFile);
  let target: { url: string; cleanup(): Promise<void> };

  beforeAll(() => {
    if (!existsSync(MIGRATE_CLI)) {
      throw new Error(`${path.relative(ROOT, MIGRATE_CLI)} is missing: run \`npm run build\` before these tests`);
    }
  });

  beforeEach(async () => {
    if (onPostgres) {
      const database = await createTestDatabase({ migrated: false });
      target = { url: database.url!, cleanup: () => database.close() };
    } else {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-pglite-cli-'));
      target = { url: `pglite://${dir}`, cleanup: () => rm(dir, { recursive: true, force: true }) };
    }
  });

  afterEach(() => target.cleanup());

  // Only what the CLI needs: the test runner's own variables (NODE_OPTIONS, DATABASE_URL...) stay out.
  const runCli = (env: Record<string, string>) =>
    exec(process.execPath, [MIGRATE_CLI], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', ...env } }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
    );

  it('applies the pending migrations, says which, and applies nothing on a second run', async () => {
    const names = (await readMigrations(MIGRATIONS_DIR)).map((m) => m.name);

    const first = await runCli({ DATABASE_URL: target.url });
    expect(first).toEqual({
      code: 0,
      stdout: expect.stringContaining(`: ${names.length} applied (${names.join(', ')}), 0 already applied`),
      stderr: '',
    });

    const second = await runCli({ DATABASE_URL: target.url });
    expect(second).toEqual({
      code: 0,
      stdout: expect.stringContaining(`: 0 applied (none), ${names.length} already applied`),
      stderr: '',
    });
  }, 60_000);

  it('exits non-zero naming DATABASE_URL when it is not a database URL', async () => {
    const result = await runCli({ DATABASE_URL: 'mysql://root@localhost/toolgate' });

    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('DATABASE_URL must be');
  });
});
