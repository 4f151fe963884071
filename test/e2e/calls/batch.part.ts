import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { eventually } from '../../support/eventually.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { EventStream, SHELL_PROJECT } from '../tools/tool-test-kit.js';

describe('tool batches', () => {
  let t: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
  });
  afterAll(() => t.close());

  const project = async (body: Record<string, unknown> = {}) => {
    const { id } = await t.createProject(tenant, body);
    return { id, dir: t.workspaceOf(id) };
  };
  const batch = (projectId: string, body: unknown, auth = tenant.auth) =>
    t.http
      .post(`/v1/projects/${projectId}/tools/batch`)
      .set(auth)
      .send(body as object);

  it('answers each call on its own in request order; the invalid ones never run and stop nothing', async () => {
    const p = await project();
    const res = await batch(p.id, {
      calls: [
        { id: 'w1', tool: 'write_file', arguments: { path: 'a.txt', content: 'alpha' } },
        { id: 'bad-args', tool: 'write_file', arguments: { path: 'never.txt', content: 42 } },
        { id: 'w2', tool: 'write_file', arguments: JSON.stringify({ path: 'b.txt', content: 'beta' }) },
        { id: 'no-such-tool', tool: 'write_fiel', arguments: { path: 'never2.txt', content: 'x' } },
        { id: 'escape', tool: 'write_file', arguments: { path: '../outside.txt', content: 'x' } },
        { id: 'bad-json', tool: 'write_file', arguments: '{"path": "never3.txt", ' },
        { id: 'missing', tool: 'read_file', arguments: { path: 'nope.txt' } },
      ],
    });
    expect(res.status).toBe(200);
    // Sent one result at a time, with the length of them all said first.
    expect(res.headers['content-type']).toMatch(/^application\/json; charset=utf-8/);
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(res.body)));
    const byId = Object.fromEntries((res.body.results as Array<{ id: string }>).map((r) => [r.id, r])) as unknown as Record<
      string,
      { status: string; error: { message: string; details: { suggestions: string[] } } }
    >;
    expect(res.body.results.map((r: { id: string }) => r.id)).toEqual([
      'w1',
      'bad-args',
      'w2',
      'no-such-tool',
      'escape',
      'bad-json',
      'missing',
    ]);
    expect(byId.w1).toMatchObject({ tool: 'write_file', status: 'ok', invocationId: expect.any(String) });
    expect(byId.w2).toMatchObject({ status: 'ok' });
    expect(byId['bad-args']).toMatchObject({ status: 'invalid_arguments', error: { code: 'invalid_arguments', retryable: false } });
    expect(byId['bad-args'].error.message).toMatch(/content/);
    expect(byId['no-such-tool']).toMatchObject({ status: 'denied', error: { code: 'tool_not_found' } });
    expect(byId['no-such-tool'].error.details.suggestions).toContain('write_file');
    expect(byId.escape).toMatchObject({ status: 'denied', error: { code: 'path_outside_workspace' } });
    expect(byId['bad-json']).toMatchObject({ status: 'invalid_arguments' });
    expect(byId.missing).toMatchObject({ status: 'error', error: { code: 'not_found' } });

    expect(await readFile(path.join(p.dir, 'a.txt'), 'utf8')).toBe('alpha');
    expect(await readFile(path.join(p.dir, 'b.txt'), 'utf8')).toBe('beta');
    for (const never of ['never.txt', 'never2.txt', 'never3.txt']) expect(existsSync(path.join(p.dir, never))).toBe(false);
    expect(existsSync(path.join(p.dir, '..', 'outside.txt'))).toBe(false);

    // Each call is audited like a single invoke: the ones that ran and the refused ones.
    const log = await t.http.get(`/v1/projects/${p.id}/invocations`).set(tenant.auth).expect(200);
    expect(log.body.items.map((i: { status: string }) => i.status).sort()).toEqual(
      ['denied', 'denied', 'error', 'invalid_arguments', 'invalid_arguments', 'ok', 'ok'].sort(),
    );
  });

  it('files a call with a bad timeout or body the same way in its answer and its audit row', async () => {
    const p = await project();
    const res = await batch(p.id, {
      calls: [
        { id: 'negative-timeout', tool: 'write_file', arguments: { path: 't.txt', content: 'x' }, timeoutMs: -5 },
        { id: 'array-arguments', tool: 'write_file', arguments: ['t.txt', 'x'] },
      ],
    }).expect(200);
    const answered = res.body.results.map((r: { id: string; status: string; error: { code: string } }) => [r.id, r.status, r.error.code]);
    const log = await t.http.get(`/v1/projects/${p.id}/invocations`).set(tenant.auth).expect(200);
    const audited = log.body.items.map((i: { status: string; errorCode: string }) => [i.status, i.errorCode]).sort();
    expect(answered.map(([, status, code]: string[]) => [status, code]).sort()).toEqual(audited);
    expect(answered.map(([, status]: string[]) => status)).toEqual(['invalid_arguments', 'invalid_arguments']);
    expect(existsSync(path.join(p.dir, 't.txt'))).toBe(false);
  });

  it('runs calls concurrently: eight one-second sleeps all run at the same time', async () => {
    const p = await project(SHELL_PROJECT);
    // Past the default budget of four commands at once: the operator gave this tenant eight.
    await t.setBudgets(tenant, { concurrentCommands: 8, commandMemoryBytes: 8 * 512 * 1024 * 1024 });
    const calls = Array.from({ length: 8 }, (_, i) => ({ id: `s${i}`, tool: 'shell_exec', arguments: { argv: ['sleep', '1'] } }));
    const res = await batch(p.id, { calls }).expect(200);
    // A call that did not run says why in the failure, not just its status.
    const outcomes = res.body.results.map((r: { status: string; error?: { code: string; message: string } }) =>
      r.error ? `${r.status}: ${r.error.code}: ${r.error.message}` : r.status,
    );
    expect(outcomes).toEqual(Array(8).fill('ok'));
    // As the audit log times them, whatever else the machine was doing: the last to start started before
    // the first to finish finished, so all eight (BATCH_CONCURRENCY) ran at once.
    const rows = (
      await t.http.get(`/v1/projects/${p.id}/invocations`).query({ tool: 'shell_exec', limit: 100 }).set(tenant.auth).expect(200)
    ).body.items as Array<{
      startedAt: string;
      finishedAt: string;
    }>;
    expect(rows).toHaveLength(8);
    expect(Math.max(...rows.map((r) => Date.parse(r.startedAt)))).toBeLessThan(Math.min(...rows.map((r) => Date.parse(r.finishedAt))));
  });

  it('streams each call of a batch as its own events', async () => {
    const p = await project();
    const stream = await EventStream.open(t.port, p.id, tenant);
    try {
      const res = await batch(p.id, {
        calls: [
          { id: 'a', tool: 'write_file', arguments: { path: 'x.txt', content: 'x' } },
          { id: 'b', tool: 'write_file', arguments: { path: 'y.txt', content: 'y' } },
        ],
      }).expect(200);
      const ids = res.body.results.map((r: { invocationId: string }) => r.invocationId);
      for (const id of ids) {
        await stream.next((e) => e.event === 'tool.started' && e.data.invocationId === id);
        await stream.next((e) => e.event === 'tool.completed' && e.data.invocationId === id);
      }
    } finally {
      stream.close();
    }
  });

  it('runs a JSON-RPC batch of tools/call over MCP concurrently, answering each by its id', async () => {
    const p = await project(SHELL_PROJECT);
    const call = (id: number, argv: string[]) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'shell_exec', arguments: { argv } },
    });
    const res = await t.http
      .post(`/v1/projects/${p.id}/mcp`)
      .set(tenant.auth)
      .set('accept', 'application/json, text/event-stream')
      .set('mcp-protocol-version', '2025-03-26')
      .send([
        call(1, ['sleep', '1']),
        call(2, ['sleep', '1']),
        call(3, ['sh', '-c', 'exit 3']),
        { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'nope', arguments: {} } },
      ])
      .expect(200);
    // Concurrently, as the audit log times them: the two sleeps ran at the same time (one started before
    // the other finished), whatever else the machine was doing.
    const sleeps = await eventually(async () => {
      const rows = (
        await t.http.get(`/v1/projects/${p.id}/invocations`).query({ tool: 'shell_exec', status: 'ok' }).set(tenant.auth).expect(200)
      ).body.items as Array<{
        arguments: { argv: string[] };
        startedAt: string;
        finishedAt: string;
      }>;
      const slept = rows.filter((row) => row.arguments.argv[0] === 'sleep');
      expect(slept).toHaveLength(2);
      return slept.map((row) => ({ start: Date.parse(row.startedAt), end: Date.parse(row.finishedAt) }));
    });
    expect(Math.max(...sleeps.map((r) => r.start))).toBeLessThan(Math.min(...sleeps.map((r) => r.end)));
    const answers = res.body as Array<{
      id: number;
      result: { isError?: boolean; structuredContent?: Record<string, unknown> };
      error?: { code: number };
    }>;
    const byId = new Map(answers.map((m) => [m.id, m.result]));
    expect([...byId.keys()].sort()).toEqual([1, 2, 3, 4]);
    expect(byId.get(1)!.isError).toBeFalsy();
    expect(byId.get(2)!.isError).toBeFalsy();
    expect(byId.get(3)!.structuredContent).toMatchObject({ exitCode: 3 });
    // An unknown tool is the request's JSON-RPC error (invalid params), not a tool result.
    expect(answers.find((m) => m.id === 4)).toMatchObject({ error: { code: -32602 } });
  });

  it('is described in the OpenAPI document: batch, Idempotency-Key, the 202 of a parked call, approve and deny', async () => {
    type Operation = {
      security?: unknown[];
      parameters?: Array<{ name: string; in: string }>;
      responses: Record<string, { description?: string }>;
    };
    const doc = (await t.http.get('/openapi.json').expect(200)).body as { paths: Record<string, Record<string, Operation>> };
    const batchOp = doc.paths['/v1/projects/{projectId}/tools/batch'].post;
    expect(Object.keys(batchOp.responses)).toEqual(expect.arrayContaining(['200', '400']));
    const invokeOp = doc.paths['/v1/projects/{projectId}/tools/{toolName}/invoke'].post;
    expect(invokeOp.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })]));
    expect(Object.keys(invokeOp.responses)).toEqual(expect.arrayContaining(['200', '202', '409', '422']));
    for (const decision of ['approve', 'deny']) {
      const op = doc.paths[`/v1/projects/{projectId}/invocations/{invocationId}/${decision}`].post;
      expect((op.security ?? []).length).toBeGreaterThan(0);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '404', '409']));
    }
  });

  it.each([
    ['an empty batch', { calls: [] }, 'empty_batch'],
    [
      '33 calls',
      { calls: Array.from({ length: 33 }, (_, i) => ({ id: `c${i}`, tool: 'write_file', arguments: { path: `f${i}`, content: 'x' } })) },
      'batch_too_large',
    ],
    [
      'duplicate ids',
      {
        calls: [
          { id: 'same', tool: 'write_file', arguments: { path: 'f1', content: 'x' } },
          { id: 'same', tool: 'write_file', arguments: { path: 'f2', content: 'x' } },
        ],
      },
      'duplicate_call_id',
    ],
    ['a body without calls', { tool: 'write_file' }, 'invalid_batch'],
    ['a call without an id', { calls: [{ tool: 'write_file', arguments: { path: 'f1', content: 'x' } }] }, 'invalid_batch'],
  ])('refuses %s with a 4xx before anything runs', async (_, body, code) => {
    const p = await project();
    const res = await batch(p.id, body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(code);
    expect(existsSync(path.join(p.dir, 'f1'))).toBe(false);
    expect(existsSync(path.join(p.dir, 'f0'))).toBe(false);
  });

  it("answers 404 for another tenant's project, and runs nothing there", async () => {
    const p = await project();
    const other = await t.createTenant();
    const res = await batch(p.id, { calls: [{ id: 'c', tool: 'write_file', arguments: { path: 'f1', content: 'x' } }] }, other.auth);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('project_not_found');
    expect(existsSync(path.join(p.dir, 'f1'))).toBe(false);
  });
});
