import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createPostgresDriver } from '../../src/database/database-driver.js';
import { eventually } from '../support/eventually.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const onPostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;

// PGlite runs inside the process: there is no connection to cut. The suite runs on PostgreSQL.
onPostgres('[sec-43] database outage (PostgreSQL only: an embedded database has no connection to cut)', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url!);
    proxy = new TcpProxy(url.hostname, Number(url.port || 5432));
    url.port = String(await proxy.start());
    const driver = createPostgresDriver(url.toString(), 5);
    t = await createTestApp({ database: { driver, url: url.toString(), close: () => driver.close() } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    const ws = t.workspaceOf(projectId);
    await mkdir(ws, { recursive: true });
    await writeFile(path.join(ws, 'a.txt'), 'hello');
  });
  afterAll(async () => {
    await t.close();
    await proxy.stop();
    await database.close();
  });

  it('answers 503 with Retry-After while the database is away, turns readiness red, and recovers by itself', async () => {
    const answered: string[] = [];
    let running = true;
    // Traffic all along: tool calls (their hot path needs no database) and project listings (it does).
    const traffic = (async () => {
      while (running) {
        const call = await t.http
          .post(`/v1/projects/${projectId}/tools/read_file/invoke`)
          .set(tenant.auth)
          .send({ arguments: { path: 'a.txt' } });
        if (call.status === 200) answered.push(call.body.invocationId);
        else expect([503]).toContain(call.status);
        await t.http.get('/v1/projects').set(tenant.auth);
      }
    })();
    await eventually(() => expect(answered.length).toBeGreaterThan(5));

    await proxy.cut();
    const down = await eventually(async () => {
      const res = await t.http.get('/v1/projects').set(tenant.auth);
      expect(res.status).toBe(503);
      return res;
    });
    expect(down.body.error.code).toBe('database_unavailable');
    expect(Number(down.headers['retry-after'])).toBeGreaterThan(0);
    const ready = await t.http.get('/health/ready');
    expect(ready.status).toBe(503);
    await t.http.get('/health/live').expect(200);
    await new Promise((r) => setTimeout(r, 2_000));

    await proxy.restore();
    await eventually(async () => expect((await t.http.get('/health/ready')).status).toBe(200), 100, 100);
    await eventually(async () => expect((await t.http.get('/v1/projects').set(tenant.auth)).status).toBe(200), 100, 100);
    running = false;
    await traffic;

    // Every call answered 200 has its audit row, those made during the outage included.
    const ids = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: { body: { items: Array<{ id: string }>; nextCursor: string | null } } = await t.http
        .get(`/v1/projects/${projectId}/invocations`)
        .query({ limit: 100, ...(cursor ? { cursor } : {}) })
        .set(tenant.auth)
        .expect(200);
      page.body.items.forEach((i) => ids.add(i.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(answered.filter((id) => !ids.has(id))).toEqual([]);
  }, 60_000);
});
