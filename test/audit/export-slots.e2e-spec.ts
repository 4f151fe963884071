import http from 'node:http';
import { AuditPartitions } from '../../src/audit/audit-partitions.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// Rows written straight in SQL, each with about `padBytes` of arguments.
async function seedRows(t: TestApp, tenantId: string, projectId: string, count: number, padBytes: number): Promise<void> {
  const startedAt = new Date();
  await t.app.get(AuditPartitions).cover([startedAt]);
  await t.database.driver.query(
    `INSERT INTO invocations (id, tenant_id, project_id, tool, status, duration_ms, arguments, started_at, finished_at)
     SELECT gen_random_uuid(), $1, $2, 'seeded', 'ok', 1, jsonb_build_object('n', n, 'pad', repeat('x', $5)), $3, $3
     FROM generate_series(1, $4) AS n ORDER BY n`,
    [tenantId, projectId, startedAt.toISOString(), count, padBytes],
  );
}

interface OpenExport {
  status: number;
  headers: http.IncomingHttpHeaders;
  // Reads the rest and resolves with the number of lines, or the body of a refusal.
  readAll(): Promise<{ lines: number; body: string }>;
  // The client goes away mid-stream.
  destroy(): void;
}

// A real client on a socket that reads nothing past the headers until asked: an export of many megabytes
// stays in progress on the service, held back by the full socket.
function openExport(port: number, tenant: TestTenant, projectId: string): Promise<OpenExport> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: `/v1/projects/${projectId}/invocations/export`, headers: tenant.auth }, (res) => {
      res.pause();
      res.on('error', () => undefined);
      resolve({
        status: res.statusCode!,
        headers: res.headers,
        readAll: () =>
          new Promise((done, failed) => {
            let body = '';
            let lines = 0;
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              for (const c of chunk) if (c === '\n') lines++;
              if (body.length < 4096) body += chunk;
            });
            res.on('end', () => done({ lines, body }));
            res.on('error', failed);
            res.resume();
          }),
        destroy: () => req.destroy(),
      });
    });
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
  });
}

// Asks again while the answer is 429, up to a bound: a place given back shows within it.
async function openWhenFree(port: number, tenant: TestTenant, projectId: string, boundMs: number): Promise<OpenExport> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const opened = await openExport(port, tenant, projectId);
    if (opened.status !== 429 || Date.now() > deadline) return opened;
    await opened.readAll();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('exports in progress per tenant (AUDIT_EXPORTS_PER_TENANT)', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;
  let bigProject: string;
  let otherProject: string;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    other = await t.createTenant();
    bigProject = (await t.createProject(tenant)).id;
    otherProject = (await t.createProject(other)).id;
    // About 24 MB a full export: far more than the loopback socket and the stream buffers hold, so an
    // export nobody reads stays in progress.
    await seedRows(t, tenant.id, bigProject, 3000, 8000);
    await seedRows(t, other.id, otherProject, 250, 100);
  }, 60_000);
  afterAll(() => t.close());

  it("refuses a tenant's third export at once with 429 while another tenant's export is served in full", async () => {
    const held = [await openExport(t.port, tenant, bigProject), await openExport(t.port, tenant, bigProject)];
    expect(held.map((h) => h.status)).toEqual([200, 200]);

    const refused = await Promise.all(Array.from({ length: 5 }, () => openExport(t.port, tenant, bigProject)));
    expect(refused.map((r) => r.status)).toEqual([429, 429, 429, 429, 429]);
    expect(refused[0].headers['retry-after']).toBe('5');
    const body = JSON.parse((await refused[0].readAll()).body) as { error: { code: string; message: string; details: unknown } };
    expect(body.error).toMatchObject({ code: 'too_many_exports', details: { limit: 2 } });
    expect(body.error.message).toContain('AUDIT_EXPORTS_PER_TENANT');
    await Promise.all(refused.slice(1).map((r) => r.readAll()));

    // Another tenant's places are its own: two at once, both read to the end, while the first's are held.
    const theirs = await Promise.all([openExport(t.port, other, otherProject), openExport(t.port, other, otherProject)]);
    expect(theirs.map((r) => r.status)).toEqual([200, 200]);
    expect((await Promise.all(theirs.map((r) => r.readAll()))).map((r) => r.lines)).toEqual([250, 250]);

    // The held exports were still in progress all along: read now, each is whole.
    expect((await Promise.all(held.map((h) => h.readAll()))).map((r) => r.lines)).toEqual([3000, 3000]);
  }, 60_000);

  it('gives the place back when an export ends and when its client goes away mid-stream', async () => {
    // Ended: export after export, one at a time, each read in full, never refused past the bound.
    for (let i = 0; i < 4; i++) {
      const next = await openWhenFree(t.port, other, otherProject, 5_000);
      expect(next.status).toBe(200);
      expect((await next.readAll()).lines).toBe(250);
    }

    const held = [await openExport(t.port, tenant, bigProject), await openExport(t.port, tenant, bigProject)];
    expect(held.map((h) => h.status)).toEqual([200, 200]);
    const third = await openExport(t.port, tenant, bigProject);
    expect(third.status).toBe(429);
    await third.readAll();

    // Abandoned: both clients go away with megabytes unread; both places come back within the bound.
    held[0].destroy();
    held[1].destroy();
    const after = [await openWhenFree(t.port, tenant, bigProject, 5_000), await openWhenFree(t.port, tenant, bigProject, 5_000)];
    expect(after.map((a) => a.status)).toEqual([200, 200]);
    const refused = await openExport(t.port, tenant, bigProject);
    expect(refused.status).toBe(429);
    await refused.readAll();
    after.forEach((a) => a.destroy());
    const last = await openWhenFree(t.port, tenant, bigProject, 5_000);
    expect(last.status).toBe(200);
    expect((await last.readAll()).lines).toBe(3000);
    expect(t.logs.filter((l) => l.level === 'error')).toEqual([]);
  }, 60_000);
});
