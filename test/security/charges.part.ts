import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// docs/security-model.md case 70: a request that carries many calls (a REST batch, an MCP JSON-RPC batch) costs
// what its calls would cost one by one, runs no more than BATCH_CONCURRENCY of them at once, and JSON-RPC
// batches are refused under the protocol revisions that removed them.

const LIMIT = 40;
const CONCURRENCY = 2;

describe('[sec-70] charges that add up', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp({
      env: { RATE_LIMIT_REQUESTS: String(LIMIT), RATE_LIMIT_WINDOW_MS: '600000', BATCH_CONCURRENCY: String(CONCURRENCY) },
    });
    port = t.port;
  });
  afterAll(() => t.close());

  const mcp = (tenant: TestTenant, projectId: string, body: unknown, revision?: string) =>
    fetch(`http://127.0.0.1:${port}/v1/projects/${projectId}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(revision ? { 'mcp-protocol-version': revision } : {}),
        ...tenant.auth,
      },
      body: JSON.stringify(body),
    });
  const write = (id: number | string, file: string) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'write_file', arguments: { path: file, content: 'x' } },
  });

  it('charges each call of a REST batch to the requests limit, and refuses a batch it cannot pay for before any call runs', async () => {
    const tenant = await t.createTenant();
    const { id } = await t.createProject(tenant); // one request
    const calls = (n: number, prefix: string) =>
      Array.from({ length: n }, (_, i) => ({ id: `c${i}`, tool: 'write_file', arguments: { path: `${prefix}-${i}.txt`, content: 'x' } }));
    const first = await t.http
      .post(`/v1/projects/${id}/tools/batch`)
      .set(tenant.auth)
      .send({ calls: calls(32, 'first') })
      .expect(200);
    expect(first.body.results.every((r: { status: string }) => r.status === 'ok')).toBe(true);
    // 1 + 32 spent of 40: a batch of 8 more is over.
    const over = await t.http
      .post(`/v1/projects/${id}/tools/batch`)
      .set(tenant.auth)
      .send({ calls: calls(8, 'over') });
    expect([over.status, over.body.error?.code]).toEqual([429, 'rate_limited']);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect((await readdir(t.workspaceOf(id))).filter((f) => f.startsWith('over-'))).toEqual([]);
  });

  it('charges each request of an MCP JSON-RPC batch, refusing the whole batch before any call runs', async () => {
    const tenant = await t.createTenant();
    const { id } = await t.createProject(tenant);
    const ok = await mcp(
      tenant,
      id,
      Array.from({ length: 30 }, (_, i) => write(i, `mcp-${i}.txt`)),
      '2025-03-26',
    );
    expect(ok.status).toBe(200);
    expect(await ok.json()).toHaveLength(30);
    const over = await mcp(
      tenant,
      id,
      Array.from({ length: 10 }, (_, i) => write(i, `mcp-over-${i}.txt`)),
      '2025-03-26',
    );
    expect(over.status).toBe(429);
    expect(((await over.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    expect((await readdir(t.workspaceOf(id))).filter((f) => f.startsWith('mcp-over-'))).toEqual([]);
  });

  it('refuses a JSON-RPC batch that asks for the same listing twice (a small request, a huge answer), before anything runs', async () => {
    const tenant = await t.createTenant();
    const { id } = await t.createProject(tenant);
    const list = (i: number) => ({ jsonrpc: '2.0', id: `l${i}`, method: 'tools/list' });
    const refused = await mcp(tenant, id, [list(0), write('w', 'listed-twice.txt'), list(1)], '2025-03-26');
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { code: -32600, message: expect.stringContaining('at most one tools/list') } });
    expect((await readdir(t.workspaceOf(id))).filter((f) => f === 'listed-twice.txt')).toEqual([]);
    // Once is fine, beside other requests.
    const once = await mcp(tenant, id, [list(0), write('w', 'listed-once.txt')], '2025-03-26');
    expect(once.status).toBe(200);
    expect(await once.json()).toHaveLength(2);
  });

  it('refuses a JSON-RPC batch that repeats a request id (one answer, the other call’s arguments) before anything runs', async () => {
    const tenant = await t.createTenant();
    const { id } = await t.createProject(tenant);
    const refused = await mcp(tenant, id, [write(42, 'first.txt'), write(42, 'second.txt')], '2025-03-26');
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: { code: -32600, message: expect.stringContaining('may not repeat a request id (42)') },
    });
    // A ping beside a call under one id is refused the same way; 1 and "1" are two ids.
    const mixed = await mcp(tenant, id, [{ jsonrpc: '2.0', id: 9, method: 'ping' }, write(9, 'third.txt')], '2025-03-26');
    expect(mixed.status).toBe(400);
    expect(await readdir(t.workspaceOf(id))).toEqual([]);
    const distinct = await mcp(tenant, id, [write(1, 'one.txt'), write('1', 'one-string.txt')], '2025-03-26');
    expect(distinct.status).toBe(200);
    expect((await readdir(t.workspaceOf(id))).sort()).toEqual(['one-string.txt', 'one.txt']);
  });

  it('refuses a JSON-RPC batch of more than 100 messages before charging its requests: the refusal costs one request', async () => {
    const tenant = await t.createTenant();
    const { id } = await t.createProject(tenant); // one request
    const pings = (n: number) => Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }));
    const refused = await mcp(tenant, id, pings(900), '2025-03-26');
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: { code: -32600, message: expect.stringContaining('must not exceed 100 messages') },
    });
    // 2 of 40 spent: a batch of 38 is paid for.
    const paid = await mcp(tenant, id, pings(38), '2025-03-26');
    expect(paid.status).toBe(200);
    expect(await paid.json()).toHaveLength(38);
  });

  it('runs no more than BATCH_CONCURRENCY calls of an MCP batch at once', async () => {
    const tenant = await t.createTenant();
    const { id } = await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['sh'] });
    // Each call records when it started and ended (ns); the overlap of those intervals is what ran at once.
    const call = (i: number) => ({
      jsonrpc: '2.0',
      id: i,
      method: 'tools/call',
      params: { name: 'shell_exec', arguments: { argv: ['sh', '-c', `s=$(date +%s%N); sleep 0.3; echo "$s $(date +%s%N)" > span-${i}`] } },
    });
    const res = await mcp(
      tenant,
      id,
      Array.from({ length: 6 }, (_, i) => call(i)),
      '2025-03-26',
    );
    expect(res.status).toBe(200);
    const spans = await Promise.all(
      Array.from({ length: 6 }, async (_, i) =>
        (await readFile(path.join(t.workspaceOf(id), `span-${i}`), 'utf8')).trim().split(' ').map(BigInt),
      ),
    );
    const peak = Math.max(...spans.map(([start]) => spans.filter(([s, e]) => s <= start && start < e).length));
    expect(peak).toBe(CONCURRENCY);
  });

  it.each([['2025-06-18'], ['2025-11-25']])(
    'refuses a JSON-RPC batch under protocol %s (header or initialize), nothing runs',
    async (revision) => {
      const tenant = await t.createTenant();
      const { id } = await t.createProject(tenant);
      const byHeader = await mcp(tenant, id, [write(1, 'h1.txt'), write(2, 'h2.txt')], revision);
      expect(byHeader.status).toBe(400);
      const body = (await byHeader.json()) as { error: { code: number; message: string } };
      expect(body.error.code).toBe(-32600);
      expect(body.error.message).toContain(revision);
      const initialize = {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: revision, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      };
      const byInitialize = await mcp(tenant, id, [initialize, write(1, 'i1.txt')]);
      expect(byInitialize.status).toBe(400);
      expect(await readdir(t.workspaceOf(id))).toEqual([]);
    },
  );
});
