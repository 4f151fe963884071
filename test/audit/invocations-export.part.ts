import http from 'node:http';
import { AuditPartitions } from '../../src/audit/audit-partitions.js';
import { callTool } from '../e2e/tools/tool-test-kit.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

const onPostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;

interface ExportLine {
  id: string;
  tool: string;
  arguments: { n: number; pad?: string };
  redactedPaths: string[];
  startedAt: string;
  cursor: string;
}

// Rows written straight in SQL, numbered in `arguments.n` in seq order.
async function seedRows(t: TestApp, tenantId: string, projectId: string, count: number, startedAt: Date, padBytes = 0): Promise<void> {
  await t.app.get(AuditPartitions).cover([startedAt]);
  await t.database.driver.query(
    `INSERT INTO invocations (id, tenant_id, project_id, tool, status, duration_ms, arguments, started_at, finished_at)
     SELECT gen_random_uuid(), $1, $2, 'seeded', 'ok', 1, jsonb_build_object('n', n, 'pad', repeat('x', $5)), $3, $3
     FROM generate_series(1, $4) AS n ORDER BY n`,
    [tenantId, projectId, startedAt.toISOString(), count, padBytes],
  );
}

// A real client on a socket: counts lines as they arrive and keeps none of them, unless asked to.
function streamExport(
  port: number,
  tenant: TestTenant,
  projectId: string,
  query: string,
  options: { keep?: boolean; stopAfterLines?: number; onChunk?: () => void } = {},
): Promise<{ status: number; lines: number; kept: ExportLine[]; cancelled: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: '127.0.0.1', port, path: `/v1/projects/${projectId}/invocations/export${query}`, headers: tenant.auth },
      (res) => {
        let lines = 0;
        let partial = '';
        const kept: ExportLine[] = [];
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          options.onChunk?.();
          const text = partial + chunk;
          const parts = text.split('\n');
          partial = parts.pop()!;
          lines += parts.length;
          if (options.keep) for (const line of parts) kept.push(JSON.parse(line) as ExportLine);
          if (options.stopAfterLines !== undefined && lines >= options.stopAfterLines) {
            req.destroy();
            resolve({ status: res.statusCode!, lines, kept, cancelled: true });
          }
        });
        res.on('end', () => resolve({ status: res.statusCode!, lines, kept, cancelled: false }));
        res.on('error', () => undefined);
      },
    );
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
  });
}

describe('the audit export', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    port = t.port;
  });
  afterAll(() => t.close());

  it('streams every row oldest first across pages, filters by since/until and resumes after a cursor', async () => {
    const { id: projectId } = await t.createProject(tenant);
    const day = Date.now() - 3_600_000;
    await seedRows(t, tenant.id, projectId, 700, new Date(day));
    await seedRows(t, tenant.id, projectId, 600, new Date(day + 60_000));

    const all = await streamExport(port, tenant, projectId, '', { keep: true });
    expect(all.status).toBe(200);
    expect(all.kept.map((l) => l.arguments.n)).toEqual([
      ...Array.from({ length: 700 }, (_, i) => i + 1),
      ...Array.from({ length: 600 }, (_, i) => i + 1),
    ]);
    expect(all.kept[0]).toMatchObject({ tool: 'seeded', redactedPaths: [], startedAt: new Date(day).toISOString() });

    const since = encodeURIComponent(new Date(day + 30_000).toISOString());
    expect((await streamExport(port, tenant, projectId, `?since=${since}`)).lines).toBe(600);
    expect((await streamExport(port, tenant, projectId, `?until=${since}`)).lines).toBe(700);

    const resumed = await streamExport(port, tenant, projectId, `?cursor=${all.kept[999].cursor}`, { keep: true });
    expect(resumed.kept.map((l) => l.id)).toEqual(all.kept.slice(1000).map((l) => l.id));
  });

  it("writes each row with the listing's fields, the caller included, plus its cursor", async () => {
    const { id: projectId } = await t.createProject(tenant);
    await callTool(t, tenant, projectId, 'list_files', {}).expect(200);
    await callTool(t, tenant, projectId, 'read_file', { path: 3 }).expect(422);
    const listed = (await t.http.get(`/v1/projects/${projectId}/invocations`).set(tenant.auth).expect(200)).body.items as Array<
      Record<string, unknown>
    >;
    const exported = (await streamExport(port, tenant, projectId, '', { keep: true })).kept as unknown as Array<Record<string, unknown>>;
    const withoutCursor = exported.map(({ cursor: _cursor, ...row }) => row);
    expect(withoutCursor).toEqual(listed);
    expect(exported.map((row) => row.caller)).toEqual([
      { keyId: tenant.keyId, name: 'default' },
      { keyId: tenant.keyId, name: 'default' },
    ]);
  });

  it('exports only the project asked for, of the tenant asking', async () => {
    const mine = (await t.createProject(tenant)).id;
    const other = await t.createTenant();
    const theirs = (await t.createProject(other)).id;
    await seedRows(t, tenant.id, mine, 3, new Date());
    await seedRows(t, other.id, theirs, 5, new Date());
    expect((await streamExport(port, tenant, mine, '')).lines).toBe(3);
    expect((await streamExport(port, other, theirs, '')).lines).toBe(5);
    expect((await streamExport(port, other, mine, '')).status).toBe(404);
  });

  onPostgres('100,000 rows (PostgreSQL only: seeding them on PGlite would add a minute to every run)', () => {
    let projectId: string;

    beforeAll(async () => {
      projectId = (await t.createProject(tenant)).id;
      // About 2.2 KB a line: 220 MB streamed, far more than the memory allowed to grow below.
      await seedRows(t, tenant.id, projectId, 100_000, new Date(), 2000);
    }, 60_000);

    it('streams them with the resident memory of the service staying flat', async () => {
      const start = process.memoryUsage().rss;
      let peak = start;
      const done = await streamExport(port, tenant, projectId, '', { onChunk: () => (peak = Math.max(peak, process.memoryUsage().rss)) });
      expect(done).toMatchObject({ status: 200, lines: 100_000, cancelled: false });
      // Holding the export in memory would take over 220 MB of JSON text alone (plus the rows it came from).
      // Streaming measured 45-101 MB of growth: the client and the service share this process, and how far
      // V8 grows the heap before collecting depends on what the Jest worker ran before this suite.
      expect((peak - start) / 2 ** 20).toBeLessThan(150);
    }, 60_000);

    it('stops cleanly when the client goes away midway, and serves the next export in full', async () => {
      const errorsBefore = t.logs.filter((l) => l.level === 'error').length;
      const cut = await streamExport(port, tenant, projectId, '', { stopAfterLines: 10_000 });
      expect(cut.cancelled).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The query loop stopped: nothing of this database is still running a statement but this probe.
      const active = await t.database.driver.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()`,
      );
      expect(Number(active[0].n)).toBe(0);
      expect(t.logs.filter((l) => l.level === 'error').length).toBe(errorsBefore);
      expect((await streamExport(port, tenant, projectId, '')).lines).toBe(100_000);
    }, 60_000);
  });
});
