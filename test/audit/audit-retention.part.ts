import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { AuditPartitions } from '../../src/audit/audit-partitions.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

const onPostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;
const DAY_MS = 86_400_000;

// Rows written straight in SQL, thousands at a time: what a day of traffic leaves, in a second.
async function seedRows(t: TestApp, tenantId: string, projectId: string, count: number, startedAt: Date): Promise<void> {
  await t.app.get(AuditPartitions).cover([startedAt]);
  await t.database.driver.query(
    `INSERT INTO invocations (id, tenant_id, project_id, tool, status, duration_ms, arguments, started_at, finished_at)
     SELECT gen_random_uuid(), $1, $2, 'seeded', 'ok', 1, '{"path":"x"}', $3, $3 FROM generate_series(1, $4)`,
    [tenantId, projectId, startedAt.toISOString(), count],
  );
}

const countSeeded = async (t: TestApp, startedAt: Date) =>
  Number(
    (
      await t.database.driver.query<{ n: string }>(`SELECT count(*) AS n FROM invocations WHERE started_at = $1`, [startedAt.toISOString()])
    )[0].n,
  );

// The longest any session has waited for a lock, sampled every few milliseconds on a connection of its own.
class LockWaitProbe {
  max = 0;
  private running = true;
  private done: Promise<void> = Promise.resolve();

  constructor(private readonly client: pg.Client) {}

  start(): void {
    this.done = (async () => {
      while (this.running) {
        const { rows } = await this.client.query<{ ms: number | null }>(
          `SELECT (max(extract(epoch FROM clock_timestamp() - waitstart)) * 1000)::float8 AS ms FROM pg_locks WHERE NOT granted`,
        );
        this.max = Math.max(this.max, rows[0].ms ?? 0);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
  }

  async stop(): Promise<number> {
    this.running = false;
    await this.done;
    return this.max;
  }
}

onPostgres('audit retention on PostgreSQL (PostgreSQL only: lock waits are measured on the server)', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { AUDIT_RETENTION_DAYS: '1' } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    await writeFile(path.join(t.config.workspace.root!, projectId, 'hello.txt'), 'hello\n');
  });
  afterAll(() => t.close());

  it('drops the partitions past retention while calls run: no call fails, no lock wait reaches 100 ms, newer rows stay', async () => {
    const old = new Date(Date.now() - 3 * DAY_MS);
    const recent = new Date(Date.now() - 2 * 3_600_000);
    await seedRows(t, tenant.id, projectId, 50_000, old);
    await seedRows(t, tenant.id, projectId, 5_000, recent);
    const partitions = t.app.get(AuditPartitions);
    const before = (await partitions.list()).map((p) => p.name);

    const probeClient = new pg.Client({ connectionString: t.database.url! });
    await probeClient.connect();
    const probe = new LockWaitProbe(probeClient);
    probe.start();
    const statuses: number[] = [];
    const until = Date.now() + 3000;
    const worker = async () => {
      while (Date.now() < until) {
        const res = await t.http
          .post(`/v1/projects/${projectId}/tools/read_file/invoke`)
          .set(tenant.auth)
          .send({ arguments: { path: 'hello.txt' } });
        statuses.push(res.status);
      }
    };
    // A reader that holds the table for 400 ms at a time (a long report): a DROP waiting behind it
    // would hold up every insert queued behind the DROP, unless it gives up early and tries again.
    const reader = new pg.Client({ connectionString: t.database.url! });
    await reader.connect();
    const longReads = (async () => {
      while (Date.now() < until - 500) {
        await reader.query('BEGIN');
        await reader.query('SELECT count(*) FROM invocations');
        await reader.query('SELECT pg_sleep(0.4)');
        await reader.query('COMMIT');
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    })();
    // The service sweeps every few minutes; here, until the old partition is gone.
    const sweeps = (async () => {
      // First while the reader holds the table.
      await new Promise((resolve) => setTimeout(resolve, 200));
      while (Date.now() < until && (await countSeeded(t, old)) > 0) {
        await partitions.sweep();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    await Promise.all([...Array.from({ length: 16 }, worker), sweeps, longReads]);
    const maxWaitMs = await probe.stop();
    await Promise.all([probeClient.end(), reader.end()]);

    expect(statuses.length).toBeGreaterThan(100);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(maxWaitMs).toBeLessThan(100);
    expect(await countSeeded(t, old)).toBe(0);
    expect(await countSeeded(t, recent)).toBe(5_000);
    const after = (await partitions.list()).map((p) => p.name);
    expect(before.length - after.length).toBeGreaterThanOrEqual(1);
    // Every call of the load has its row.
    await t.app.get((await import('../../src/audit/audit-writer.js')).AuditWriter).drain();
    const audited = await t.database.driver.query<{ n: string }>(
      `SELECT count(*) AS n FROM invocations WHERE tool = 'read_file' AND project_id = $1`,
      [projectId],
    );
    expect(Number(audited[0].n)).toBe(statuses.length);
  }, 60_000);

  it('keeps every row when retention is 0', async () => {
    const keeper = await createTestApp({ env: { AUDIT_RETENTION_DAYS: '0' } });
    try {
      const owner = await keeper.createTenant();
      const project = (await keeper.createProject(owner)).id;
      const ancient = new Date(Date.now() - 400 * DAY_MS);
      await seedRows(keeper, owner.id, project, 1_000, ancient);
      await keeper.app.get(AuditPartitions).sweep();
      expect(await countSeeded(keeper, ancient)).toBe(1_000);
    } finally {
      await keeper.close();
    }
  });
});
