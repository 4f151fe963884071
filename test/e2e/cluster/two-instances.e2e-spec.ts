import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { createPostgresDriver } from '../../../src/database/database-driver.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { parsePrometheusText } from '../../support/prometheus-text.js';
import { TcpProxy } from '../../support/tcp-proxy.js';
import { expectNoProcess, uniqueSleep, waitForProcess } from '../../support/processes.js';
import { callTool, EventStream } from '../tools/tool-test-kit.js';
import { commandTool, enableSkill, registerSkill, skillOf, STRING_ARG } from '../skills/skill-test-kit.js';
import { connectMcp } from '../mcp/mcp-test-kit.js';
import { LOGGING_TOOLS, LoggingUpstream } from '../mcp/logging-upstream.js';

// Two real instances of the service on one PostgreSQL database, as behind a load balancer: a change made
// through A must reach B's caches through the change bus, not their TTLs (set to ten minutes here).
// It runs in CI's PostgreSQL pass (the only one that sets TEST_DATABASE_URL), so once per CI run.
const serverUrl = process.env.TEST_DATABASE_URL;
const describeOnPostgres = serverUrl ? describe : describe.skip;
const title = serverUrl ? 'two instances on one PostgreSQL' : 'two instances on one PostgreSQL (skipped: TEST_DATABASE_URL is not set)';

const LONG_TTL = '600000';
const METRICS_TOKEN = 'cluster-metrics-token-0123456789';
const WITHIN_MS = 1_000;

// Polls until `check` holds; answers how long it took, or fails after `timeoutMs`.
async function within(timeoutMs: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describeOnPostgres(title, () => {
  let database: TestDatabase;
  let shared: string;
  let a: TestApp;
  let b: TestApp;
  let tenant: TestTenant;
  // B's bus connection goes through this proxy, so a test can cut it without touching B's pool.
  // An MCP source that logs, for the level a client sets on one instance and the other honours.
  const loggingUpstream = new LoggingUpstream();
  const busProxy = new TcpProxy('127.0.0.1', Number(new URL(serverUrl ?? 'postgresql://x:5432').port || 5432));

  beforeAll(async () => {
    database = await createTestDatabase();
    await loggingUpstream.start();
    // One workspace root for both, as a shared volume would be.
    shared = await mkdtemp(path.join(os.tmpdir(), 'toolgate-cluster-'));
    await chmod(shared, 0o711);
    const env = {
      WORKSPACE_ROOT: path.join(shared, 'workspaces'),
      WORKSPACE_ALLOWED_ROOTS: shared,
      API_KEY_CACHE_TTL_MS: LONG_TTL,
      WORKSPACE_CACHE_TTL_MS: LONG_TTL,
      METRICS_TOKEN,
      FETCH_ALLOW_HOSTS: `127.0.0.1:${loggingUpstream.port}`,
    };
    a = await createTestApp({ env, database });
    await busProxy.start();
    const proxied = new URL(database.url!);
    proxied.port = String(busProxy.port);
    const driverB = createPostgresDriver(database.url!, 5);
    const viaProxy = {
      ...driverB,
      newClient: (name: string) => new pg.Client({ connectionString: proxied.toString(), application_name: name }),
    };
    b = await createTestApp({ env, database: { driver: viaProxy, url: database.url, close: () => driverB.close() } });
    tenant = await a.createTenant();
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await busProxy.stop();
    await loggingUpstream.stop();
    await database?.close();
    if (shared) await rm(shared, { recursive: true, force: true });
  });

  it('both instances listen on the bus', async () => {
    for (const app of [a, b]) {
      const ready = await app.http.get('/health/ready').set(app.admin).expect(200);
      expect(ready.body.changeBus).toMatchObject({ mode: 'postgres', connected: true, instanceId: expect.stringMatching(/^[0-9a-f]{8}$/) });
    }
  });

  it('a key revoked on A is refused by B within one second', async () => {
    const other = await a.createTenant();
    // B has verified the key, so it sits in B's cache.
    await b.http.get('/v1/projects').set(other.auth).expect(200);
    const keys = await a.http.get('/v1/api-keys').set(other.auth).expect(200);
    const keyId = (keys.body.items ?? keys.body)[0].id as string;
    await a.http.delete(`/v1/api-keys/${keyId}`).set(other.auth).expect(204);
    const took = await within(WITHIN_MS, async () => (await b.http.get('/v1/projects').set(other.auth)).status === 401);
    expect(took).toBeLessThan(WITHIN_MS);
  });

  it('[sec-98] a key revoked on A closes the event stream it holds open on B within 2 s', async () => {
    const other = await a.createTenant();
    const project = await a.createProject(other);
    const port = b.port;
    const keyId = ((await a.http.get('/v1/api-keys').set(other.auth).expect(200)).body.items as Array<{ id: string; name: string }>).find(
      (k) => k.name === 'default',
    )!.id;
    let markRevoked!: (at: number) => void;
    const revokedAt = new Promise<number>((resolve) => (markRevoked = resolve));
    const ended = new Promise<number>((resolve, reject) => {
      const request = http.get(
        { host: '127.0.0.1', port, path: `/v1/projects/${project.id}/events`, headers: { ...other.auth, accept: 'text/event-stream' } },
        (response) => {
          if (response.statusCode !== 200) return reject(new Error(`answered ${response.statusCode}`));
          response.resume();
          response.on('end', () => resolve(Date.now()));
          // Revoked only once the stream is open on B.
          void a.http
            .delete(`/v1/api-keys/${keyId}`)
            .set(other.auth)
            .expect(204)
            .then(() => markRevoked(Date.now()), reject);
        },
      );
      request.on('error', reject);
    });
    const [closed, revoked] = await Promise.all([ended, revokedAt]);
    expect(closed - revoked).toBeLessThan(2000);
  });

  it('[sec-91] notifications/cancelled sent to B stops the MCP call running on A: its sandbox torn down, audited cancelled', async () => {
    const project = await a.createProject(tenant, { shellEnabled: true, shellAllowlist: ['sleep'] });
    const marker = uniqueSleep(30);
    const mcp = async (app: TestApp, message: unknown) =>
      fetch(`http://127.0.0.1:${app.port}/v1/projects/${project.id}/mcp`, {
        method: 'POST',
        headers: { ...tenant.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(message),
      });
    const running = mcp(a, {
      jsonrpc: '2.0',
      id: 'across',
      method: 'tools/call',
      params: { name: 'shell_exec', arguments: { argv: ['sleep', marker] } },
    });
    await waitForProcess(marker);
    const cancelledAt = Date.now();
    expect(
      (await mcp(b, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'across', reason: 'from B' } })).status,
    ).toBe(202);
    const answer = (await (await running).json()) as { result: { isError?: boolean; _meta: Record<string, { error?: { code: string } }> } };
    expect(Date.now() - cancelledAt).toBeLessThan(2_000);
    expect(answer.result).toMatchObject({ isError: true, _meta: { 'dev.toolgate/error': { error: { code: 'cancelled' } } } });
    await expectNoProcess(marker);
    const rows = (await a.http.get(`/v1/projects/${project.id}/invocations`).query({ tool: 'shell_exec' }).set(tenant.auth).expect(200))
      .body.items;
    expect(rows).toEqual([
      expect.objectContaining({ channel: 'mcp', status: 'error', errorCode: 'cancelled', errorMessage: expect.stringMatching(/from B/) }),
    ]);
  });

  it('an MCP log level set on A holds for the calls B serves within one second, and an initialize on B clears it for A', async () => {
    const project = await a.createProject(tenant);
    const source = { type: 'mcp', url: loggingUpstream.url, tools: LOGGING_TOOLS.map((tool) => tool.name) };
    const skill = await a.http
      .post('/v1/skills')
      .set(tenant.auth)
      .send({ name: `logging-${project.id.slice(0, 8)}`, version: '1.0.0', description: 'logs', source })
      .expect(201);
    await enableSkill(a, tenant, project.id, skill.body.id as string);
    const call = async (app: TestApp) => {
      const res = await fetch(`http://127.0.0.1:${app.port}/v1/projects/${project.id}/mcp`, {
        method: 'POST',
        headers: {
          ...tenant.auth,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chatty', arguments: {} } }),
      });
      return (await res.text()).match(/"method":"notifications\/message"/g)?.length ?? 0;
    };
    // B has read (and cached, for ten minutes) that the key set no level.
    expect(await call(b)).toBe(0);
    const onA = await connectMcp(a, project.id, tenant.auth);
    await onA.setLoggingLevel('error');
    // error, critical, alert, emergency, and the message quoting the credential (error).
    await within(WITHIN_MS, async () => (await call(b)) === 5);
    expect(await call(a)).toBe(5);
    const onB = await connectMcp(b, project.id, tenant.auth);
    await within(WITHIN_MS, async () => (await call(a)) === 0);
    await Promise.all([onA.close(), onB.close()]);
  });

  it("a project's workspace changed on A is the one B resolves", async () => {
    const project = await a.createProject(tenant);
    await writeFile(path.join(a.workspaceOf(project.id), 'where.txt'), 'first\n');
    const read = async (app: TestApp) =>
      (await callTool(app, tenant, project.id, 'read_file', { path: 'where.txt' }).expect(200)).body.result.content as string;
    expect(await read(b)).toBe('first\n');

    const moved = path.join(shared, `moved-${project.id}`);
    await mkdir(moved);
    await writeFile(path.join(moved, 'where.txt'), 'second\n');
    await a.http.patch(`/v1/admin/projects/${project.id}`).set(a.admin).send({ workspacePath: moved }).expect(200);
    const took = await within(WITHIN_MS, async () => (await read(b)) === 'second\n');
    expect(took).toBeLessThan(WITHIN_MS);
  });

  it("a project's shell settings changed on A bind B within one second; deleted on A, B answers 404", async () => {
    const project = await a.createProject(tenant, { shellEnabled: true, shellAllowlist: ['printf'] });
    const shell = () => callTool(b, tenant, project.id, 'shell_exec', { argv: ['printf', 'on B'] });
    expect((await shell().expect(200)).body.result.stdout).toBe('on B');
    await a.http.patch(`/v1/projects/${project.id}`).set(tenant.auth).send({ shellEnabled: false }).expect(200);
    expect(await within(WITHIN_MS, async () => (await shell()).status === 403)).toBeLessThan(WITHIN_MS);
    expect((await shell()).body.error.code).toBe('shell_disabled');

    await a.http.delete(`/v1/projects/${project.id}`).set(tenant.auth).expect(204);
    expect(await within(WITHIN_MS, async () => (await callTool(b, tenant, project.id, 'list_files', {})).status === 404)).toBeLessThan(
      WITHIN_MS,
    );
  });

  it('a tenant deleted on A: B refuses its key within one second', async () => {
    const doomed = await a.createTenant();
    await b.http.get('/v1/projects').set(doomed.auth).expect(200);
    await a.http.delete(`/v1/admin/tenants/${doomed.id}`).set(a.admin).expect(204);
    expect(await within(WITHIN_MS, async () => (await b.http.get('/v1/projects').set(doomed.auth)).status === 401)).toBeLessThan(WITHIN_MS);
  });

  it('a skill enabled on A is listed and run by B; disabled on A, B stops offering it', async () => {
    const project = await a.createProject(tenant, { shellEnabled: true, shellAllowlist: ['printf'] });
    const skill = await registerSkill(a, tenant, skillOf([commandTool('cluster_say', ['printf', '%s', '{{text}}'], STRING_ARG('text'))]));
    const listed = async () =>
      ((await b.http.get(`/v1/projects/${project.id}/tools`).set(tenant.auth).expect(200)).body.tools as Array<{ name: string }>).map(
        (t) => t.name,
      );
    // B has the project's tool list cached without the skill.
    expect(await listed()).not.toContain('cluster_say');

    expect((await enableSkill(a, tenant, project.id, skill.id)).status).toBe(201);
    expect(await within(WITHIN_MS, async () => (await listed()).includes('cluster_say'))).toBeLessThan(WITHIN_MS);
    const ran = await callTool(b, tenant, project.id, 'cluster_say', { text: 'from B' }).expect(200);
    expect(ran.body).toMatchObject({ status: 'ok', result: { stdout: 'from B' } });

    await a.http.delete(`/v1/projects/${project.id}/skills/${skill.id}`).set(tenant.auth).expect(204);
    expect(await within(WITHIN_MS, async () => !(await listed()).includes('cluster_say'))).toBeLessThan(WITHIN_MS);
    await callTool(b, tenant, project.id, 'cluster_say', { text: 'gone' }).expect(404);
  });

  it('an event stream on B carries the calls A runs, in order, and resumes with Last-Event-ID on either instance', async () => {
    const project = await a.createProject(tenant);
    const [portA, portB] = [a.port, b.port];
    const stream = await EventStream.open(portB, project.id, tenant);
    let first: string;
    try {
      // B's interest in the project reaches A through the bus a moment after the stream opens.
      await within(5_000, async () => {
        const id = (await callTool(a, tenant, project.id, 'list_files', {}).expect(200)).body.invocationId as string;
        try {
          await stream.next((e) => e.event === 'tool.completed' && e.data.invocationId === id, 300);
          first = id;
          return true;
        } catch {
          return false;
        }
      });
      const ofFirst = stream.events.filter((e) => e.data.invocationId === first);
      expect(ofFirst.map((e) => e.event)).toEqual(['tool.started', 'tool.completed']);
      expect(ofFirst[1].data).toMatchObject({ tool: 'list_files', status: 'ok', projectId: project.id, channel: 'rest' });
    } finally {
      stream.close();
    }
    const lastSeen = stream.events.at(-1)!.id!;

    // Calls run on A while nobody is connected; the client comes back to B, then to A, with the id it had.
    const missed: string[] = [];
    for (let i = 0; i < 3; i++) missed.push((await callTool(a, tenant, project.id, 'list_files', {}).expect(200)).body.invocationId);
    const expected = missed.flatMap((id) => [
      ['tool.started', id],
      ['tool.completed', id],
    ]);
    for (const port of [portB, portA]) {
      const resumed = await EventStream.open(port, project.id, tenant, { lastEventId: lastSeen });
      try {
        await resumed.next((e) => e.event === 'tool.completed' && e.data.invocationId === missed[2]);
        expect(resumed.events.map((e) => [e.event, e.data.invocationId])).toEqual(expected);
      } finally {
        resumed.close();
      }
    }
  });

  it('an MCP task made on A is polled, waited on and cancelled on B; A answers what B decided', async () => {
    const project = await a.createProject(tenant, { approvalRequired: ['write_file'] });
    const onA = await connectMcp(a, project.id, tenant.auth);
    const onB = await connectMcp(b, project.id, tenant.auth);
    try {
      await onA.listTools();
      const park = async (file: string) => {
        const stream = onA.experimental.tasks.callToolStream(
          { name: 'write_file', arguments: { path: file, content: file } },
          CallToolResultSchema,
          { task: {} },
        );
        const first = (await stream.next()).value as { type: string; task: { taskId: string; statusMessage?: string } };
        await stream.return(undefined);
        expect(first.type).toBe('taskCreated');
        return { taskId: first.task.taskId, invocationId: /invocation ([0-9a-f-]{36})/.exec(first.task.statusMessage ?? '')![1] };
      };
      const approved = await park('across.txt');
      expect((await onB.experimental.tasks.getTask(approved.taskId)).status).toBe('working');
      const waiting = onB.experimental.tasks.getTaskResult(approved.taskId, CallToolResultSchema);
      await a.http
        .post(`/v1/projects/${project.id}/invocations/${approved.invocationId}/approve`)
        .set(tenant.deciderAuth)
        .send({})
        .expect(200);
      expect(((await waiting) as { structuredContent?: unknown }).structuredContent).toMatchObject({ path: 'across.txt' });

      const withdrawn = await park('withdrawn.txt');
      expect(await onB.experimental.tasks.cancelTask(withdrawn.taskId)).toMatchObject({ status: 'cancelled' });
      expect((await onA.experimental.tasks.getTask(withdrawn.taskId)).status).toBe('cancelled');
    } finally {
      await onA.close();
      await onB.close();
    }
  });

  it("B's bus connection killed: it reconnects; cut for longer, /health/ready says so, and a key revoked meanwhile is refused once it is back", async () => {
    const busOf = async (app: TestApp) => (await app.http.get('/health/ready').set(app.admin).expect(200)).body.changeBus;
    const busMetric = async (app: TestApp, name: string) => {
      const samples = parsePrometheusText(
        (
          await app.http
            .get('/metrics')
            .set({ Authorization: `Bearer ${METRICS_TOKEN}` })
            .expect(200)
        ).text,
      ).get(name)?.samples;
      expect(samples).toHaveLength(1);
      return samples![0].value;
    };
    const before = await busOf(b);
    const pid = async () =>
      (
        await database.driver.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [
          `toolgate-bus-${before.instanceId}`,
        ])
      )[0]?.pid;
    const killed = await pid();
    expect(killed).toEqual(expect.any(Number));
    await database.driver.query('SELECT pg_terminate_backend($1)', [killed]);
    await within(5_000, async () => {
      const bus = await busOf(b);
      return bus.connected && bus.reconnects > before.reconnects;
    });
    expect(await pid()).not.toBe(killed);

    // A longer outage: B's bus cannot reconnect while the proxy refuses, and readiness stays 200 while saying so.
    const other = await a.createTenant();
    await b.http.get('/v1/projects').set(other.auth).expect(200);
    await busProxy.cut();
    await within(2_000, async () => !(await busOf(b)).connected);
    const down = await b.http.get('/health/ready').set(b.admin).expect(200);
    expect(down.body).toMatchObject({
      status: 'ok',
      changeBus: { mode: 'postgres', connected: false, caches: expect.stringContaining('TTL'), lastError: expect.any(String) },
    });
    // What an operator alerts on: the same state in /metrics.
    expect(await busMetric(b, 'toolgate_change_bus_connected')).toBe(0);
    // Attempts go on while the proxy refuses: at least as many as readiness counted a moment ago.
    expect(await busMetric(b, 'toolgate_change_bus_reconnects_total')).toBeGreaterThanOrEqual(down.body.changeBus.reconnects);

    const keys = await a.http.get('/v1/api-keys').set(other.auth).expect(200);
    await a.http
      .delete(`/v1/api-keys/${(keys.body.items ?? keys.body)[0].id}`)
      .set(other.auth)
      .expect(204);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // B missed the message: its cache still holds the key until the bus is back (or the TTL ends).
    await b.http.get('/v1/projects').set(other.auth).expect(200);

    await busProxy.restore();
    await within(10_000, async () => (await busOf(b)).connected);
    // Back: B dropped its caches when it reconnected, since it may have missed anything.
    await b.http.get('/v1/projects').set(other.auth).expect(401);
    expect((await b.http.get('/health/ready').set(b.admin).expect(200)).body.changeBus).toMatchObject({
      connected: true,
      caches: expect.not.stringContaining('TTL'),
    });
    expect(await busMetric(b, 'toolgate_change_bus_connected')).toBe(1);

    // And it hears new changes again.
    const project = await a.createProject(tenant);
    await writeFile(path.join(a.workspaceOf(project.id), 'where.txt'), 'first\n');
    expect((await callTool(b, tenant, project.id, 'read_file', { path: 'where.txt' }).expect(200)).body.result.content).toBe('first\n');
    const moved = path.join(shared, `after-${project.id}`);
    await mkdir(moved);
    await writeFile(path.join(moved, 'where.txt'), 'second\n');
    await a.http.patch(`/v1/admin/projects/${project.id}`).set(a.admin).send({ workspacePath: moved }).expect(200);
    await within(
      WITHIN_MS,
      async () =>
        (await callTool(b, tenant, project.id, 'read_file', { path: 'where.txt' }).expect(200)).body.result.content === 'second\n',
    );
  });
});
