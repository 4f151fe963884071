import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { eventually } from '../support/eventually.js';
import { enableSkill, postSkill, uniqueName } from '../e2e/skills/skill-test-kit.js';
import { SHELL_PROJECT } from '../e2e/tools/tool-test-kit.js';

// Exactly once under every failure: a call with an Idempotency-Key runs once, whatever its result and
// whatever its client does, and every retry gets the answer it stored; an approved call always ends.

const LEVELS = 200_000;
const RESULT_MAX_BYTES = 1024 * 1024;
const KEY_META = 'dev.toolgate/idempotencyKey';
const REPLAYED_META = 'dev.toolgate/idempotentReplayed';
const SLOW_MS = 1500;

// A tenant's MCP server written by hand on node:http: the SDK's server writes its answers with
// JSON.stringify, which cannot write a result nested 200,000 deep. Stateless, JSON answers; it counts,
// per tool, the calls that arrived, the ones it answered and the ones whose request was dropped under it.
class RawMcpUpstream {
  readonly arrived = new Map<string, number>();
  readonly answered = new Map<string, number>();
  readonly dropped = new Map<string, number>();
  private readonly waiters: Array<{ tool: string; count: number; resolve: () => void }> = [];
  private server: http.Server | null = null;
  port = 0;

  static readonly TOOLS = ['deep', 'big', 'lone', 'slow', 'tagged'];

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  runs(tool: string): number {
    return this.arrived.get(tool) ?? 0;
  }

  // Resolves once `count` calls of `tool` have arrived.
  arrival(tool: string, count: number): Promise<void> {
    if (this.runs(tool) >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ tool, count, resolve }));
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      id?: number | string;
      method: string;
      params?: Record<string, unknown>;
    };
    if (message.id === undefined) return void res.writeHead(202).end();
    const answer = (result: string): void => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${result}}`);
    };
    switch (message.method) {
      case 'initialize':
        return answer(
          JSON.stringify({
            protocolVersion: message.params?.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: 'raw', version: '1' },
          }),
        );
      case 'tools/list': {
        const schema = { type: 'object', properties: { tag: { type: 'string', maxLength: 100 } }, additionalProperties: false };
        const tools = RawMcpUpstream.TOOLS.map((name) => ({
          name,
          description: `The ${name} tool`,
          inputSchema: name === 'tagged' ? { ...schema, required: ['tag'] } : schema,
        }));
        return answer(JSON.stringify({ tools }));
      }
      case 'tools/call':
        return this.call(String(message.params?.name), (message.params?.arguments ?? {}) as Record<string, unknown>, res, answer);
      default:
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'no' } }));
    }
  }

  private async call(
    tool: string,
    args: Record<string, unknown>,
    res: http.ServerResponse,
    answer: (result: string) => void,
  ): Promise<void> {
    this.arrived.set(tool, this.runs(tool) + 1);
    for (const waiter of this.waiters.filter((w) => w.tool === tool && this.runs(tool) >= w.count)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    res.on('close', () => {
      const map = res.writableFinished ? this.answered : this.dropped;
      map.set(tool, (map.get(tool) ?? 0) + 1);
    });
    const structured = (text: string) => answer(`{"content":[],"structuredContent":${text}}`);
    switch (tool) {
      case 'deep':
        return structured(`{"deep":${'['.repeat(LEVELS)}${']'.repeat(LEVELS)}}`);
      case 'big':
        return structured(JSON.stringify({ text: 'x'.repeat(RESULT_MAX_BYTES + 512 * 1024) }));
      case 'lone':
        // A lone UTF-16 surrogate, which jsonb refuses as an escape.
        return structured('{"text":"\\ud800 alone"}');
      case 'slow':
        await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
        if (res.destroyed) return;
        return structured(JSON.stringify({ ran: this.runs('slow'), tag: args.tag ?? null }));
      default:
        return structured(JSON.stringify({ tag: args.tag ?? null }));
    }
  }
}

// One app (or two over one database) with the upstream imported as a skill into a plain project and
// into one that parks every network tool for approval.
async function setUp(upstream: RawMcpUpstream, app: TestApp, tenant: TestTenant): Promise<{ plain: string; parked: string }> {
  const imported = await postSkill(app, tenant, {
    name: uniqueName('raw-upstream'),
    version: '1.0.0',
    description: 'Tools of a hand-written MCP server',
    source: { type: 'mcp', url: upstream.url, tools: RawMcpUpstream.TOOLS },
  });
  expect({ status: imported.status, body: imported.status === 201 ? 'imported' : imported.body }).toEqual({
    status: 201,
    body: 'imported',
  });
  const plain = (await app.createProject(tenant)).id;
  const parked = (await app.createProject(tenant, { approvalRequired: ['@network'] })).id;
  for (const projectId of [plain, parked]) expect((await enableSkill(app, tenant, projectId, imported.body.id as string)).status).toBe(201);
  return { plain, parked };
}

// The calls of one tenant on one app, over REST, batch and MCP (raw JSON-RPC, as any client sends it).
function caller(app: TestApp, tenant: TestTenant) {
  const invoke = (projectId: string, tool: string, args: object, key?: string) => {
    const request = app.http.post(`/v1/projects/${projectId}/tools/${tool}/invoke`).set(tenant.auth);
    return (key === undefined ? request : request.set('Idempotency-Key', key)).send({ arguments: args });
  };
  const batch = (projectId: string, calls: object[]) =>
    app.http.post(`/v1/projects/${projectId}/tools/batch`).set(tenant.auth).send({ calls });
  const mcpBody = (tool: string, args: object, key?: string, meta: Record<string, unknown> = {}) => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: tool, arguments: args, ...(key !== undefined ? { _meta: { [KEY_META]: key, ...meta } } : {}) },
  });
  const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...tenant.auth };
  const mcp = async (projectId: string, body: unknown) => {
    const port = app.port;
    const res = await fetch(`http://127.0.0.1:${port}/v1/projects/${projectId}/mcp`, {
      method: 'POST',
      headers: mcpHeaders,
      body: JSON.stringify(body),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON-RPC answers, read field by field
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const mcpCall = (projectId: string, tool: string, args: object, key?: string, meta?: Record<string, unknown>) =>
    mcp(projectId, mcpBody(tool, args, key, meta));
  // Sends a request and drops its connection once the upstream holds the call: the client went away mid-run.
  const abandon = async (upstream: RawMcpUpstream, url: string, body: unknown, headers: Record<string, string>) => {
    const port = app.port;
    const arrived = upstream.arrival('slow', upstream.runs('slow') + 1);
    const request = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: url,
      headers: { 'content-type': 'application/json', ...headers },
    });
    request.on('error', () => undefined);
    request.end(JSON.stringify(body));
    await arrived;
    request.destroy();
  };
  const invocation = async (projectId: string, id: string) =>
    (await app.http.get(`/v1/projects/${projectId}/invocations/${id}`).set(tenant.auth).expect(200)).body;
  return { invoke, batch, mcp, mcpBody, mcpCall, mcpHeaders, abandon, invocation };
}

let keys = 0;
const newKey = (what: string) => `${what}-${process.pid}-${++keys}`;

const parkedRow = async (app: TestApp, id: string) => {
  const [row] = await app.database.driver.query<{ status: string; outcome: unknown; arguments: unknown }>(
    'SELECT status, outcome, arguments FROM parked_calls WHERE id = $1',
    [id],
  );
  return { ...row, outcome: typeof row.outcome === 'string' ? (JSON.parse(row.outcome) as unknown) : row.outcome };
};

describe('exactly once under every failure', () => {
  const upstream = new RawMcpUpstream();
  let t: TestApp;
  let tenant: TestTenant;
  let plain: string;
  let parked: string;
  let calls: ReturnType<typeof caller>;

  beforeAll(async () => {
    await upstream.start();
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}`, RESULT_MAX_BYTES: String(RESULT_MAX_BYTES) } });
    tenant = await t.createTenant();
    ({ plain, parked } = await setUp(upstream, t, tenant));
    calls = caller(t, tenant);
  });
  afterAll(async () => {
    await t.close();
    await upstream.stop();
  });

  // The first call with a key runs the tool once and is answered `code`; every retry of that key, over
  // REST, batch and MCP, gets the same stored answer; a first call over batch or MCP is kept the same way.
  async function runsOnceEverywhere(tool: string, code: string) {
    const { invoke, batch, mcpCall } = calls;
    const before = upstream.runs(tool);
    const key = newKey(tool);
    const first = await invoke(plain, tool, {}, key).expect(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.body).toMatchObject({ tool, status: 'error', error: { code, retryable: false }, invocationId: expect.any(String) });
    expect(first.body.error.message).toMatch(/^The tool ran, but its result/);
    for (let i = 0; i < 2; i++) {
      const again = await invoke(plain, tool, {}, key).expect(200);
      expect({ replayed: again.headers['idempotent-replayed'], body: again.body }).toEqual({ replayed: 'true', body: first.body });
    }
    const overBatch = await batch(plain, [{ id: 'c', tool, arguments: {}, idempotencyKey: key }]).expect(200);
    expect(overBatch.body.results).toEqual([{ id: 'c', ...first.body, replayed: true }]);
    const overMcp = await mcpCall(plain, tool, {}, key);
    expect(overMcp.body.result).toMatchObject({
      isError: true,
      structuredContent: { status: 'error', error: first.body.error },
      _meta: { 'dev.toolgate/invocationId': first.body.invocationId, [REPLAYED_META]: true },
    });
    expect(upstream.runs(tool)).toBe(before + 1);

    // Keys first used over batch and over MCP: one run each, the same answer on every retry.
    const batchKey = newKey(tool);
    const ranInBatch = await batch(plain, [{ id: 'b', tool, arguments: {}, idempotencyKey: batchKey }]).expect(200);
    expect(ranInBatch.body.results[0]).toMatchObject({ id: 'b', status: 'error', error: { code } });
    expect(ranInBatch.body.results[0].replayed).toBeUndefined();
    const batchRetry = await batch(plain, [{ id: 'b', tool, arguments: {}, idempotencyKey: batchKey }]).expect(200);
    expect(batchRetry.body.results).toEqual([{ ...ranInBatch.body.results[0], replayed: true }]);
    const mcpKey = newKey(tool);
    const ranOverMcp = await mcpCall(plain, tool, {}, mcpKey);
    expect(ranOverMcp).toMatchObject({
      status: 200,
      body: { result: { isError: true, structuredContent: { status: 'error', error: { code } } } },
    });
    // The retry carries _meta of another kind too, so the SDK's server (not the direct answers) takes it.
    const mcpRetry = await mcpCall(plain, tool, {}, mcpKey, { 'dev.example/trace': 'retry' });
    expect(mcpRetry.body.result).toEqual({ ...ranOverMcp.body.result, _meta: { ...ranOverMcp.body.result._meta, [REPLAYED_META]: true } });
    const restRetry = await invoke(plain, tool, {}, mcpKey).expect(200);
    expect(restRetry.body.invocationId).toBe(ranOverMcp.body.result._meta['dev.toolgate/invocationId']);
    expect(upstream.runs(tool)).toBe(before + 3);

    // Each run is audited as what it answered.
    const row = await calls.invocation(plain, first.body.invocationId as string);
    expect(row).toMatchObject({ status: 'error', errorCode: code });
  }

  it('[sec-93] a result nested 200,000 deep runs once over REST, batch and MCP, and every retry gets the same stored answer', async () => {
    await runsOnceEverywhere('deep', 'result_too_deep');
  });

  it('[sec-93] a result past the size cap runs once over REST, batch and MCP, and every retry gets the same stored answer', async () => {
    await runsOnceEverywhere('big', 'result_too_large');
  });

  it('[sec-93] without a key such a call is answered as the run it was, never as a 500 or a JSON-RPC -32603', async () => {
    const before = upstream.runs('deep');
    const rest = await calls.invoke(plain, 'deep', {}).expect(200);
    expect(rest.body).toMatchObject({ status: 'error', error: { code: 'result_too_deep' } });
    const batch = await calls.batch(plain, [{ id: 'a', tool: 'big', arguments: {} }]).expect(200);
    expect(batch.body.results[0]).toMatchObject({ status: 'error', error: { code: 'result_too_large' } });
    const mcp = await calls.mcpCall(plain, 'deep', {});
    expect(mcp.body.error).toBeUndefined();
    expect(mcp.body.result).toMatchObject({ isError: true, structuredContent: { error: { code: 'result_too_deep' } } });
    expect(upstream.runs('deep')).toBe(before + 2);
  });

  it('[sec-93] an approved call of such a tool reaches a final state, with its outcome kept as jsonb takes it', async () => {
    const cases: Array<[string, object]> = [
      ['deep', { status: 'error', error: { code: 'result_too_deep' } }],
      ['big', { status: 'error', error: { code: 'result_too_large' } }],
      // jsonb refuses a lone surrogate: it is kept (and answered) as U+FFFD.
      ['lone', { status: 'ok', result: { text: '\ufffd alone' } }],
    ];
    for (const [tool, expected] of cases) {
      const before = upstream.runs(tool);
      const key = newKey(`parked-${tool}`);
      const first = await calls.invoke(parked, tool, {}, key).expect(202);
      const retry = await calls.invoke(parked, tool, {}, key).expect(202);
      expect({ replayed: retry.headers['idempotent-replayed'], body: retry.body }).toEqual({ replayed: 'true', body: first.body });
      const id = first.body.invocationId as string;
      // The key that made the call cannot approve it: another person's key does.
      const decided = await t.http.post(`/v1/projects/${parked}/invocations/${id}/approve`).set(tenant.deciderAuth).send({}).expect(200);
      expect({ tool, outcome: decided.body.outcome }).toMatchObject({ tool, outcome: { invocationId: id, ...expected } });
      const row = await parkedRow(t, id);
      expect({ tool, status: row.status, outcome: row.outcome, arguments: row.arguments }).toEqual({
        tool,
        status: 'done',
        outcome: decided.body.outcome,
        arguments: null,
      });
      const shown = await calls.invocation(parked, id);
      expect(shown).toMatchObject({ approval: { status: 'approved' }, outcome: decided.body.outcome });
      const twice = await t.http.post(`/v1/projects/${parked}/invocations/${id}/approve`).set(tenant.deciderAuth).send({});
      expect({ status: twice.status, code: twice.body.error?.code }).toEqual({ status: 409, code: 'approval_already_decided' });
      // The caller's retry is still the 202 it got: the call was not parked or run twice.
      const later = await calls.invoke(parked, tool, {}, key).expect(202);
      expect(later.body).toEqual(first.body);
      expect({ tool, runs: upstream.runs(tool) }).toEqual({ tool, runs: before + 1 });
    }
  });

  it('[sec-94] a call with a key whose client disconnects mid-run runs to its end, and the retry gets its answer (REST, batch, MCP)', async () => {
    const { invoke, batch, mcpCall, mcpBody, abandon } = calls;
    const url = (what: string) => `/v1/projects/${plain}/${what}`;
    const answeredBefore = upstream.answered.get('slow') ?? 0;

    const restKey = newKey('gone-rest');
    await abandon(upstream, url('tools/slow/invoke'), { arguments: { tag: 'rest' } }, { ...tenant.auth, 'idempotency-key': restKey });
    const rest = await invoke(plain, 'slow', { tag: 'rest' }, restKey).expect(200);
    expect({ replayed: rest.headers['idempotent-replayed'], body: rest.body }).toMatchObject({
      replayed: 'true',
      body: { status: 'ok', result: { tag: 'rest' } },
    });

    const batchKey = newKey('gone-batch');
    const batchCalls = [{ id: 's', tool: 'slow', arguments: { tag: 'batch' }, idempotencyKey: batchKey }];
    await abandon(upstream, url('tools/batch'), { calls: batchCalls }, tenant.auth);
    const inBatch = await batch(plain, batchCalls).expect(200);
    expect(inBatch.body.results).toEqual([
      expect.objectContaining({ id: 's', status: 'ok', result: expect.objectContaining({ tag: 'batch' }), replayed: true }),
    ]);

    const mcpKey = newKey('gone-mcp');
    await abandon(upstream, url('mcp'), mcpBody('slow', { tag: 'mcp' }, mcpKey), {
      ...tenant.auth,
      accept: 'application/json, text/event-stream',
    });
    const overMcp = await mcpCall(plain, 'slow', { tag: 'mcp' }, mcpKey);
    expect(overMcp.body.result).toMatchObject({ structuredContent: { tag: 'mcp' }, _meta: { [REPLAYED_META]: true } });
    expect(overMcp.body.result.isError).toBeUndefined();

    // Each ran once, to its end: the upstream answered all three and none was dropped under it.
    expect(upstream.answered.get('slow')).toBe(answeredBefore + 3);
    expect(upstream.dropped.get('slow') ?? 0).toBe(0);
    for (const id of [
      rest.body.invocationId,
      inBatch.body.results[0].invocationId,
      overMcp.body.result._meta['dev.toolgate/invocationId'],
    ]) {
      expect(await calls.invocation(plain, id as string)).toMatchObject({ status: 'ok', errorCode: null });
    }
  });

  it('[sec-94] an explicit MCP notifications/cancelled is kept as the cancelled answer of its key', async () => {
    const key = newKey('cancelled');
    const runsBefore = upstream.runs('slow');
    const port = t.port;
    const gone = new AbortController();
    // A JSON-RPC batch (protocol 2025-03-26): the call, then its cancellation. A cancelled request gets no
    // JSON-RPC answer, so this HTTP request is given up once the call's answer is stored.
    const request = fetch(`http://127.0.0.1:${port}/v1/projects/${plain}/mcp`, {
      method: 'POST',
      headers: calls.mcpHeaders,
      body: JSON.stringify([
        calls.mcpBody('slow', { tag: 'cancel' }, key),
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'no longer needed' } },
      ]),
      signal: gone.signal,
    }).catch(() => undefined);
    const audited = await eventually(
      async () => {
        const items = (await t.http.get(`/v1/projects/${plain}/invocations`).set(tenant.auth).expect(200)).body.items as Array<
          Record<string, unknown>
        >;
        const row = items.find((item) => item.tool === 'slow' && item.errorCode === 'cancelled');
        expect(row).toBeDefined();
        return row!;
      },
      100,
      100,
    );
    const retry = await calls.mcpCall(plain, 'slow', { tag: 'cancel' }, key);
    expect(retry.body.result).toMatchObject({
      isError: true,
      structuredContent: { status: 'error', error: { code: 'cancelled' } },
      _meta: { 'dev.toolgate/invocationId': audited.id, [REPLAYED_META]: true },
    });
    gone.abort();
    await request;
    // Cancelled before it reached the upstream, or while there: never run again by the retry.
    expect(upstream.runs('slow')).toBeLessThanOrEqual(runsBefore + 1);
  });

  it('[sec-94] a call refused before it ran frees its key for the corrected call (REST, batch, MCP)', async () => {
    const { invoke, batch, mcpCall } = calls;
    const before = upstream.runs('tagged');
    const restKey = newKey('fix-rest');
    const refused = await invoke(plain, 'tagged', { tag: 5 }, restKey);
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({ status: 422, code: 'invalid_arguments' });
    const fixed = await invoke(plain, 'tagged', { tag: 'five' }, restKey).expect(200);
    expect({ replayed: fixed.headers['idempotent-replayed'], body: fixed.body }).toMatchObject({
      replayed: undefined,
      body: { status: 'ok', result: { tag: 'five' } },
    });

    const batchKey = newKey('fix-batch');
    const refusedInBatch = await batch(plain, [{ id: 'x', tool: 'tagged', arguments: {}, idempotencyKey: batchKey }]).expect(200);
    expect(refusedInBatch.body.results[0]).toMatchObject({ status: 'invalid_arguments' });
    const fixedInBatch = await batch(plain, [{ id: 'x', tool: 'tagged', arguments: { tag: 'b' }, idempotencyKey: batchKey }]).expect(200);
    expect(fixedInBatch.body.results[0]).toMatchObject({ status: 'ok', result: { tag: 'b' } });
    expect(fixedInBatch.body.results[0].replayed).toBeUndefined();

    const mcpKey = newKey('fix-mcp');
    const refusedOverMcp = await mcpCall(plain, 'tagged', { tag: [] }, mcpKey);
    expect(refusedOverMcp.body.result).toMatchObject({
      isError: true,
      structuredContent: { status: 'refused', error: { code: 'invalid_arguments' } },
    });
    const fixedOverMcp = await mcpCall(plain, 'tagged', { tag: 'm' }, mcpKey);
    expect(fixedOverMcp.body.result).toMatchObject({ structuredContent: { tag: 'm' } });
    expect(fixedOverMcp.body.result._meta[REPLAYED_META]).toBeUndefined();
    // Refusals never reached the upstream; each corrected call ran once.
    expect(upstream.runs('tagged')).toBe(before + 3);

    const badKey = await mcpCall(plain, 'tagged', { tag: 'm' }, 'has space');
    expect(badKey.body.result).toMatchObject({ isError: true, structuredContent: { error: { code: 'invalid_idempotency_key' } } });
  });

  it('[sec-94] the docs say which answers replay and which free the key', async () => {
    const page = await readFile(path.join(process.cwd(), 'docs', 'keys-roles-approvals.md'), 'utf8');
    const section = page.slice(page.indexOf('## Safe retries'), page.indexOf('## Calls that wait for a person'));
    expect(section.length).toBeGreaterThan(0);
    for (const phrase of [
      'Replays that answer',
      'Is free again',
      'invalid_arguments',
      'rate_limited',
      'notifications/cancelled',
      'result_too_large',
      'not cancelled when its client disconnects',
      'dev.toolgate/idempotencyKey',
    ]) {
      expect({ phrase, documented: section.includes(phrase) }).toEqual({ phrase, documented: true });
    }
  });
});

describe('exactly once: refusals and abandoned approvals', () => {
  let t: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    // One command call in 3 s (the window starts at the first call, so the second call is refused unless the
    // first took longer than the window: with 1 s, a loaded machine took that long once); parked calls swept
    // every 500 ms.
    t = await createTestApp({ env: { RATE_LIMIT_COMMAND_CALLS: '1', RATE_LIMIT_WINDOW_MS: '3000', APPROVAL_TIMEOUT_MS: '2000' } });
    tenant = await t.createTenant();
  });
  afterAll(() => t.close());

  it('[sec-94] a rate-limited call frees its key: the retry after the window runs', async () => {
    const { id } = await t.createProject(tenant, SHELL_PROJECT);
    const body = { arguments: { argv: ['sh', '-c', 'echo ran >> count.txt'] } };
    const call = (key?: string) => {
      const request = t.http.post(`/v1/projects/${id}/tools/shell_exec/invoke`).set(tenant.auth);
      return (key ? request.set('Idempotency-Key', key) : request).send(body);
    };
    await call().expect(200);
    const limited = await call('limited');
    expect({ status: limited.status, code: limited.body.error?.code }).toEqual({ status: 429, code: 'rate_limited' });
    const ran = await eventually(
      async () => {
        const res = await call('limited');
        expect(res.status).toBe(200);
        return res;
      },
      100,
      100,
    );
    expect(ran.headers['idempotent-replayed']).toBeUndefined();
    expect(ran.body.status).toBe('ok');
    expect(await readFile(path.join(t.workspaceOf(id), 'count.txt'), 'utf8')).toBe('ran\nran\n');
  });

  it('[sec-93] an approved call whose instance stopped before it stored the outcome still reaches a final state', async () => {
    const { id: projectId } = await t.createProject(tenant, { approvalRequired: ['write_file'] });
    const parkedCall = await t.http
      .post(`/v1/projects/${projectId}/tools/write_file/invoke`)
      .set(tenant.auth)
      .send({ arguments: { path: 'a.txt', content: 'x' } })
      .expect(202);
    const id = parkedCall.body.invocationId as string;
    // As an instance that died after the decision leaves it: approved an hour ago, no outcome.
    await t.database.driver.query(`UPDATE parked_calls SET status = 'approved', decided_at = now() - interval '1 hour' WHERE id = $1`, [
      id,
    ]);
    const row = await eventually(
      async () => {
        const current = await parkedRow(t, id);
        expect(current.status).toBe('done');
        return current;
      },
      60,
      100,
    );
    expect(row).toMatchObject({
      arguments: null,
      outcome: { invocationId: id, status: 'error', error: { code: 'outcome_lost', retryable: false } },
    });
    // The audit row says so too, instead of pending_approval forever.
    const shown = await eventually(
      async () => {
        const body = (await t.http.get(`/v1/projects/${projectId}/invocations/${id}`).set(tenant.auth).expect(200)).body;
        expect(body).toMatchObject({ status: 'error', errorCode: 'outcome_lost' });
        return body;
      },
      60,
      100,
    );
    expect(shown.outcome).toEqual(row.outcome);
  });
});

// Two instances over one PostgreSQL, as behind a load balancer: the key's claim, stored answer and wait
// hold across them. Runs where TEST_DATABASE_URL is set.
const describeOnPostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;

describeOnPostgres('exactly once across two instances on one PostgreSQL', () => {
  const upstream = new RawMcpUpstream();
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let tenant: TestTenant;
  let plain: string;
  let parked: string;

  beforeAll(async () => {
    await upstream.start();
    database = await createTestDatabase();
    const env = { FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}`, RESULT_MAX_BYTES: String(RESULT_MAX_BYTES) };
    a = await createTestApp({ env, database });
    b = await createTestApp({ env, database });
    tenant = await a.createTenant();
    ({ plain, parked } = await setUp(upstream, a, tenant));
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await database?.close();
    await upstream.stop();
  });

  it('[sec-93] a result nested 200,000 deep run on A is replayed by B; one approved on B of a call parked on A ends', async () => {
    const onA = caller(a, tenant);
    const onB = caller(b, tenant);
    const before = upstream.runs('deep');
    const key = newKey('cluster-deep');
    const first = await onA.invoke(plain, 'deep', {}, key).expect(200);
    expect(first.body).toMatchObject({ status: 'error', error: { code: 'result_too_deep' } });
    const again = await onB.invoke(plain, 'deep', {}, key).expect(200);
    expect({ replayed: again.headers['idempotent-replayed'], body: again.body }).toEqual({ replayed: 'true', body: first.body });
    const overMcp = await onB.mcpCall(plain, 'deep', {}, key);
    expect(overMcp.body.result._meta).toMatchObject({ 'dev.toolgate/invocationId': first.body.invocationId, [REPLAYED_META]: true });

    const pending = await onA.invoke(parked, 'deep', {}, newKey('cluster-parked')).expect(202);
    const id = pending.body.invocationId as string;
    const decided = await b.http.post(`/v1/projects/${parked}/invocations/${id}/approve`).set(tenant.deciderAuth).send({}).expect(200);
    expect(decided.body.outcome).toMatchObject({ status: 'error', error: { code: 'result_too_deep' } });
    expect(await parkedRow(a, id)).toMatchObject({ status: 'done', outcome: decided.body.outcome });
    expect(upstream.runs('deep')).toBe(before + 2);
  });

  it('[sec-94] a call whose client left A runs to its end, and the retry on B waits for its answer', async () => {
    const onA = caller(a, tenant);
    const onB = caller(b, tenant);
    const answeredBefore = upstream.answered.get('slow') ?? 0;
    const key = newKey('cluster-gone');
    await onA.abandon(
      upstream,
      `/v1/projects/${plain}/tools/slow/invoke`,
      { arguments: { tag: 'cluster' } },
      { ...tenant.auth, 'idempotency-key': key },
    );
    const retry = await onB.invoke(plain, 'slow', { tag: 'cluster' }, key).expect(200);
    expect({ replayed: retry.headers['idempotent-replayed'], body: retry.body }).toMatchObject({
      replayed: 'true',
      body: { status: 'ok', result: { tag: 'cluster' } },
    });
    expect(upstream.answered.get('slow')).toBe(answeredBefore + 1);
    expect(upstream.dropped.get('slow') ?? 0).toBe(0);
  });
});
