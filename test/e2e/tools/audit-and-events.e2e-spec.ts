import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { connectMcp } from '../mcp/mcp-test-kit.js';
import { callTool, EventStream, SHELL_PROJECT, withoutRequestId } from './tool-test-kit.js';

interface InvocationRow {
  id: string;
  projectId: string;
  tool: string;
  channel: string;
  caller: { keyId: string; name: string | null } | null;
  status: string;
  event: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  durationMs: number;
  arguments: unknown;
  argumentsTruncated: boolean;
  startedAt: string;
  finishedAt: string;
}

// One app for the parts below that need no settings of their own (each works in tenants of its own): an app
// and its database cost a few seconds of a test file's time to start.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('the invocation audit', () => {
  let tenant: TestTenant;

  const invocations = (projectId: string, query: Record<string, string | number> = {}) =>
    t.http.get(`/v1/projects/${projectId}/invocations`).query(query).set(tenant.auth);
  const rows = async (projectId: string, query: Record<string, string | number> = {}) =>
    (await invocations(projectId, { limit: 100, ...query }).expect(200)).body.items as InvocationRow[];

  beforeAll(async () => {
    tenant = await t.createTenant();
  });

  describe('one row per call, whatever the outcome', () => {
    let projectId: string;
    const ids: Record<string, string> = {};
    let invalidMessage: string;

    beforeAll(async () => {
      projectId = (await t.createProject(tenant, SHELL_PROJECT)).id;
      await writeFile(path.join(t.config.workspace.root!, projectId, 'hello.txt'), 'hello\n');
      const call = (tool: string, args: unknown, options?: { timeoutMs?: number }) => callTool(t, tenant, projectId, tool, args, options);
      ids.ok = (await call('read_file', { path: 'hello.txt' }).expect(200)).body.invocationId;
      ids.error = (await call('read_file', { path: 'missing.txt' }).expect(200)).body.invocationId;
      ids.timeout = (await call('shell_exec', { argv: ['sleep', '5'] }, { timeoutMs: 300 }).expect(200)).body.invocationId;
      invalidMessage = (await call('read_file', { path: 42 }).expect(422)).body.error.message;
      await call('read_file', { path: '../../etc/passwd' }).expect(403);
      await call('reed_file', { path: 'hello.txt' }).expect(404);
    });

    it('holds one row per call with its tool, status, event, error code and arguments', async () => {
      const listed = await rows(projectId);
      const summary = listed.map(({ tool, status, event, errorCode, arguments: args }) => ({
        tool,
        status,
        event,
        errorCode,
        arguments: args,
      }));
      const expected = [
        { tool: 'read_file', status: 'ok', event: null, errorCode: null, arguments: { path: 'hello.txt' } },
        { tool: 'read_file', status: 'error', event: null, errorCode: 'not_found', arguments: { path: 'missing.txt' } },
        { tool: 'shell_exec', status: 'timeout', event: null, errorCode: 'timeout', arguments: { argv: ['sleep', '5'] } },
        {
          tool: 'read_file',
          status: 'invalid_arguments',
          event: 'TOOL_ARG_VALIDATION_FAILURE',
          errorCode: 'invalid_arguments',
          arguments: { path: 42 },
        },
        { tool: 'read_file', status: 'denied', event: null, errorCode: 'path_outside_workspace', arguments: { path: '../../etc/passwd' } },
        { tool: 'reed_file', status: 'denied', event: null, errorCode: 'tool_not_found', arguments: { path: 'hello.txt' } },
      ];
      expect(summary).toHaveLength(expected.length);
      expect(summary).toEqual(expect.arrayContaining(expected));
      const byStatus = (status: string) => listed.find((row) => row.status === status)!;
      expect([byStatus('ok').id, byStatus('error').id, byStatus('timeout').id]).toEqual([ids.ok, ids.error, ids.timeout]);
      expect(byStatus('invalid_arguments').errorMessage).toBe(invalidMessage);
      expect(byStatus('timeout').errorMessage).toMatch(/300 ms/);
    });

    it('answers one row by its id, the same as in the list', async () => {
      const listed = await rows(projectId);
      for (const id of [ids.ok, ids.error, ids.timeout]) {
        const row = (await t.http.get(`/v1/projects/${projectId}/invocations/${id}`).set(tenant.auth).expect(200)).body as InvocationRow;
        expect(row).toEqual(listed.find((r) => r.id === id));
        expect(row).toMatchObject({ projectId, argumentsTruncated: false });
        expect(Date.parse(row.finishedAt)).toBeGreaterThanOrEqual(Date.parse(row.startedAt));
        expect(row.durationMs).toBeGreaterThanOrEqual(0);
      }
      const timeout = (await t.http.get(`/v1/projects/${projectId}/invocations/${ids.timeout}`).set(tenant.auth)).body as InvocationRow;
      expect(timeout.durationMs).toBeGreaterThanOrEqual(300);
    });

    it('filters by tool and by status', async () => {
      expect((await rows(projectId, { tool: 'shell_exec' })).map((r) => r.id)).toEqual([ids.timeout]);
      expect((await rows(projectId, { tool: 'read_file' })).map((r) => r.status).sort()).toEqual([
        'denied',
        'error',
        'invalid_arguments',
        'ok',
      ]);
      expect((await rows(projectId, { status: 'denied' })).map((r) => r.tool).sort()).toEqual(['read_file', 'reed_file']);
      expect((await rows(projectId, { status: 'invalid_arguments' })).map((r) => r.event)).toEqual(['TOOL_ARG_VALIDATION_FAILURE']);
      expect(await rows(projectId, { tool: 'reed_file', status: 'ok' })).toEqual([]);
      expect((await invocations(projectId, { status: 'exploded' }).expect(400)).body.error.message).toMatch(/status/);
    });

    it('names the key that made each call on its row, refusals included', async () => {
      const callers = (await rows(projectId)).map((row) => row.caller);
      expect(callers).toHaveLength(6);
      expect(new Set(callers.map((caller) => JSON.stringify(caller)))).toEqual(
        new Set([JSON.stringify({ keyId: tenant.keyId, name: 'default' })]),
      );
    });

    it('answers 404 invocation_not_found for an id it does not have', async () => {
      const res = await t.http.get(`/v1/projects/${projectId}/invocations/${randomUUID()}`).set(tenant.auth).expect(404);
      expect(res.body.error.code).toBe('invocation_not_found');
      await t.http.get(`/v1/projects/${projectId}/invocations/not-a-uuid`).set(tenant.auth).expect(404);
    });
  });

  it('pages through the rows with a cursor, each row once', async () => {
    const { id: projectId } = await t.createProject(tenant);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await callTool(t, tenant, projectId, 'list_files', {}).expect(200)).body.invocationId);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { body: { items: InvocationRow[]; nextCursor: string | null } } = await invocations(projectId, {
        limit: 2,
        ...(cursor ? { cursor } : {}),
      }).expect(200);
      seen.push(...res.body.items.map((row) => row.id));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...made].sort());
    expect((await invocations(projectId, { cursor: 'not-a-cursor' }).expect(400)).body.error.code).toBe('invalid_cursor');
  });

  it('names the calling key on every channel (REST, batch, MCP, browse), and filters the log by it', async () => {
    const { id: projectId } = await t.createProject(tenant);
    const agent = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ name: 'nightly-agent', role: 'agent', projectIds: [projectId] })
      .expect(201);
    const agentAuth = { Authorization: `Bearer ${agent.body.key}` };
    const asAgent = { keyId: agent.body.id as string, name: 'nightly-agent' };
    const asAdmin = { keyId: tenant.keyId, name: 'default' };

    const rest = (await t.http.post(`/v1/projects/${projectId}/tools/list_files/invoke`).set(agentAuth).send({ arguments: {} }).expect(200))
      .body.invocationId;
    const batch = await t.http
      .post(`/v1/projects/${projectId}/tools/batch`)
      .set(agentAuth)
      .send({
        calls: [
          { id: 'a', tool: 'list_files', arguments: {} },
          { id: 'b', tool: 'no_such_tool', arguments: {} },
        ],
      })
      .expect(200);
    const mcp = await connectMcp(t, projectId, agentAuth);
    try {
      await mcp.callTool({ name: 'list_files', arguments: {} });
      await mcp.callTool({ name: 'read_file', arguments: { path: 7 } });
    } finally {
      await mcp.close();
    }
    await t.http.get(`/v1/projects/${projectId}/workspace/files`).set(tenant.auth).expect(200);

    // The batch runs its calls side by side: their rows may come in either order.
    const listed = await rows(projectId);
    const summary = listed.map(({ channel, tool, status, caller }) => ({ channel, tool, status, caller }));
    const expected = [
      { channel: 'rest', tool: 'list_files', status: 'ok', caller: asAgent },
      { channel: 'rest', tool: 'list_files', status: 'ok', caller: asAgent },
      { channel: 'rest', tool: 'no_such_tool', status: 'denied', caller: asAgent },
      { channel: 'mcp', tool: 'list_files', status: 'ok', caller: asAgent },
      { channel: 'mcp', tool: 'read_file', status: 'invalid_arguments', caller: asAgent },
      { channel: 'browse', tool: 'list_files', status: 'ok', caller: asAdmin },
    ];
    expect(summary).toHaveLength(expected.length);
    expect(summary).toEqual(expect.arrayContaining(expected));
    expect(listed.find((row) => row.id === batch.body.results[0].invocationId)?.caller).toEqual(asAgent);
    // One by id answers the same caller as the listing.
    const one = (await t.http.get(`/v1/projects/${projectId}/invocations/${rest}`).set(tenant.auth).expect(200)).body as InvocationRow;
    expect(one.caller).toEqual(asAgent);

    expect((await rows(projectId, { callerKeyId: asAdmin.keyId })).map((row) => row.channel)).toEqual(['browse']);
    expect(await rows(projectId, { callerKeyId: asAgent.keyId })).toHaveLength(5);
    expect(await rows(projectId, { callerKeyId: randomUUID() })).toEqual([]);
    expect((await invocations(projectId, { callerKeyId: 'not-a-key' }).expect(400)).body.error.message).toMatch(/callerKeyId/);
  });

  it('stores the arguments as received, and a preview marked truncated when they are large', async () => {
    const { id: projectId } = await t.createProject(tenant);
    const content = 'x'.repeat(100 * 1024);
    await callTool(t, tenant, projectId, 'write_file', { path: 'big.txt', content }).expect(200);
    await callTool(t, tenant, projectId, 'read_file', '{"path":"big.txt","limit":1}').expect(200);
    const listed = await rows(projectId);
    const [big, small] = ['write_file', 'read_file'].map((tool) => listed.find((row) => row.tool === tool));
    expect(big).toMatchObject({ tool: 'write_file', status: 'ok', argumentsTruncated: true, arguments: { preview: expect.any(String) } });
    const preview = (big!.arguments as { preview: string }).preview;
    expect(preview.startsWith('{"path":"big.txt","content":"xxx')).toBe(true);
    expect(Buffer.byteLength(preview)).toBeLessThanOrEqual(8 * 1024);
    expect(small).toMatchObject({ tool: 'read_file', argumentsTruncated: false, arguments: '{"path":"big.txt","limit":1}' });
  });
});

// The rows of one audit batch share created_at: the log must still come back in the order of the calls.
describe('the order of the invocation audit', () => {
  let batched: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    // A longer flush interval puts every call below in one batch, as a busy server does.
    batched = await createTestApp({ env: { AUDIT_FLUSH_INTERVAL_MS: '400' } });
    tenant = await batched.createTenant();
  });
  afterAll(() => batched.close());

  it('lists calls oldest first, in the order they were made, also when one batch wrote them', async () => {
    const { id: projectId } = await batched.createProject(tenant);
    const made: string[] = [];
    for (let i = 0; i < 6; i++) made.push((await callTool(batched, tenant, projectId, 'list_files', {}).expect(200)).body.invocationId);
    const listed = (await batched.http.get(`/v1/projects/${projectId}/invocations`).set(tenant.auth).expect(200)).body
      .items as InvocationRow[];
    expect(listed.map((row) => row.id)).toEqual(made);
  });
});

// A call that ends after its project was deleted queues a row the database refuses (foreign key); it must
// not hold back the rows of other projects.
describe('the invocation audit after a project is deleted during a call', () => {
  let tenant: TestTenant;

  beforeAll(async () => {
    tenant = await t.createTenant();
  });

  it("keeps recording other projects' calls", async () => {
    const doomed = await t.createProject(tenant, SHELL_PROJECT);
    const other = await t.createProject(tenant);
    const events = await EventStream.open(t.port, doomed.id, tenant);
    const running = callTool(t, tenant, doomed.id, 'shell_exec', { argv: ['sleep', '0.5'] }).then((res) => res);
    try {
      await events.next((e) => e.event === 'tool.started' && e.data.tool === 'shell_exec');
    } finally {
      events.close();
    }
    await t.http.delete(`/v1/projects/${doomed.id}`).set(tenant.auth).expect(204);
    expect((await running).status).toBe(200);

    const { invocationId } = (await callTool(t, tenant, other.id, 'list_files', {}).expect(200)).body;
    const listed = await t.http
      .get(`/v1/projects/${other.id}/invocations`)
      .set(tenant.auth)
      .timeout(5000)
      .then(
        (res) => ({ status: res.status, ids: (res.body.items as InvocationRow[]).map((row) => row.id) }),
        () => ({ status: 'no answer within 5 s', ids: [] }),
      );
    expect(listed).toEqual({ status: 200, ids: [invocationId] });
  });
});

describe('the event stream', () => {
  let tenant: TestTenant;
  let projectId: string;
  let port: number;
  let stream: EventStream;

  beforeAll(async () => {
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    await writeFile(path.join(t.config.workspace.root!, projectId, 'present.txt'), 'here\n');
    port = t.port;
  });
  beforeEach(async () => {
    stream = await EventStream.open(port, projectId, tenant);
  });
  afterEach(() => stream.close());

  it('sends tool.error with the invocation id, the tool and the error when a call fails', async () => {
    const res = await callTool(t, tenant, projectId, 'read_file', { path: 'absent.txt' }).expect(200);
    const { invocationId } = res.body;
    const error = await stream.next((e) => e.event === 'tool.error' && e.data.invocationId === invocationId);
    expect(error).toEqual({
      event: 'tool.error',
      // Unique per event (not the invocation's id, which two events of one call share): time, instance, counter.
      id: expect.stringMatching(/^[0-9a-z]+-[0-9a-f]{8}-[0-9a-z]+$/),
      data: {
        type: 'tool.error',
        projectId,
        invocationId,
        tool: 'read_file',
        channel: 'rest',
        caller: { keyId: tenant.keyId, name: 'default' },
        status: 'error',
        error: res.body.error,
        durationMs: expect.any(Number),
        at: expect.any(String),
      },
    });
    const started = stream.events.findIndex((e) => e.event === 'tool.started' && e.data.invocationId === invocationId);
    expect(started).toBeGreaterThanOrEqual(0);
    expect(started).toBeLessThan(stream.events.indexOf(error));
  });

  it('sends tool.started then tool.completed for a call that succeeds', async () => {
    const { invocationId } = (await callTool(t, tenant, projectId, 'read_file', { path: 'present.txt' }).expect(200)).body;
    const completed = await stream.next((e) => e.event === 'tool.completed' && e.data.invocationId === invocationId);
    expect(completed.data).toMatchObject({ tool: 'read_file', status: 'ok', projectId });
    expect(stream.events.filter((e) => e.data.invocationId === invocationId).map((e) => e.event)).toEqual([
      'tool.started',
      'tool.completed',
    ]);
  });

  it('sends tool.error for refused calls too: invalid arguments and an unknown tool', async () => {
    await callTool(t, tenant, projectId, 'read_file', { path: ['a'] }).expect(422);
    await callTool(t, tenant, projectId, 'reed_file', { path: 'a' }).expect(404);
    const invalid = await stream.next((e) => e.event === 'tool.error' && e.data.status === 'invalid_arguments');
    expect(invalid.data).toMatchObject({
      tool: 'read_file',
      error: { code: 'invalid_arguments', message: expect.stringContaining('/path must be string') },
    });
    const unknown = await stream.next((e) => e.event === 'tool.error' && e.data.tool === 'reed_file');
    expect(unknown.data).toMatchObject({ status: 'denied', error: { code: 'tool_not_found' } });
  });

  it('resumes after Last-Event-ID with the events the client missed, in order, and nothing it already had', async () => {
    const first = (await callTool(t, tenant, projectId, 'list_files', {}).expect(200)).body.invocationId;
    const seen = await stream.next((e) => e.event === 'tool.completed' && e.data.invocationId === first);
    stream.close();
    const missed: string[] = [];
    for (let i = 0; i < 3; i++) missed.push((await callTool(t, tenant, projectId, 'list_files', {}).expect(200)).body.invocationId);
    const resumed = await EventStream.open(port, projectId, tenant, { lastEventId: seen.id });
    try {
      await resumed.next((e) => e.event === 'tool.completed' && e.data.invocationId === missed[2]);
      expect(resumed.events.map((e) => [e.event, e.data.invocationId])).toEqual(
        missed.flatMap((id) => [
          ['tool.started', id],
          ['tool.completed', id],
        ]),
      );
      // Event ids are unique: the two events of one call do not share one.
      expect(new Set(resumed.events.map((e) => e.id)).size).toBe(resumed.events.length);
    } finally {
      resumed.close();
    }
  });

  it("carries only this project's events, and no tenant id", async () => {
    const other = await t.createProject(tenant);
    await callTool(t, tenant, other.id, 'list_files', {}).expect(200);
    const { invocationId } = (await callTool(t, tenant, projectId, 'list_files', {}).expect(200)).body;
    await stream.next((e) => e.event === 'tool.completed' && e.data.invocationId === invocationId);
    expect(stream.events.every((e) => e.data.projectId === projectId)).toBe(true);
    expect(stream.events.some((e) => 'tenantId' in e.data)).toBe(false);
  });
});

describe('[sec-40] tools, invocations and events across tenants', () => {
  let alice: TestTenant;
  let bob: TestTenant;

  beforeAll(async () => {
    [alice, bob] = [await t.createTenant(), await t.createTenant()];
  });

  const routes = (projectId: string, invocationId: string): Array<[string, string, object?]> => [
    ['get', `/v1/projects/${projectId}/tools`],
    ['get', `/v1/projects/${projectId}/tools/read_file?format=openai`],
    ['post', `/v1/projects/${projectId}/tools/write_file/invoke`, { arguments: { path: 'stolen.txt', content: 'bob was here' } }],
    ['post', `/v1/projects/${projectId}/tools/reed_file/invoke`, { arguments: {} }],
    ['get', `/v1/projects/${projectId}/invocations`],
    ['get', `/v1/projects/${projectId}/invocations/${invocationId}`],
    ['get', `/v1/projects/${projectId}/events`],
  ];
  const send = (tenant: TestTenant, [method, url, body]: [string, string, object?]) => {
    const req = (method === 'post' ? t.http.post(url) : t.http.get(url)).set(tenant.auth).timeout(5000);
    return body ? req.send(body) : req;
  };
  // The project id appears in the message; the rest must be the same bytes.
  const normalised = (text: string, projectId: string) => withoutRequestId(text).split(projectId).join('<project>');

  it("answers another tenant's project on every tool route exactly like a missing one", async () => {
    const project = await t.createProject(alice);
    const invocationId = (await callTool(t, alice, project.id, 'list_files', {}).expect(200)).body.invocationId as string;
    const missingProject = randomUUID();

    const foreign = [];
    for (const route of routes(project.id, invocationId)) foreign.push(await send(bob, route));
    for (const [i, route] of routes(missingProject, invocationId).entries()) {
      const missing = await send(bob, route);
      expect({ route: route[1], status: foreign[i].status }).toEqual({ route: route[1], status: 404 });
      expect(missing.status).toBe(404);
      expect(foreign[i].body.error).toEqual({ code: 'project_not_found', message: `No project with id '${project.id}'` });
      expect(normalised(foreign[i].text, project.id)).toBe(normalised(missing.text, missingProject));
    }

    // Nothing of Bob's reached Alice's project: no file, no audit row, her invocation untouched.
    const read = await callTool(t, alice, project.id, 'read_file', { path: 'stolen.txt' }).expect(200);
    expect(read.body.error.code).toBe('not_found');
    const aliceRows = (await t.http.get(`/v1/projects/${project.id}/invocations`).set(alice.auth).expect(200)).body
      .items as InvocationRow[];
    expect(aliceRows.map((row) => row.id).sort()).toEqual([invocationId, read.body.invocationId].sort());

    // Once Alice's project is gone, Bob gets the very same bytes as before.
    await t.http.delete(`/v1/projects/${project.id}`).set(alice.auth).expect(204);
    for (const [i, route] of routes(project.id, invocationId).entries()) {
      const gone = await send(bob, route).expect(404);
      expect(withoutRequestId(gone.text)).toBe(withoutRequestId(foreign[i].text));
    }
  });

  it("answers another tenant's invocation id in one's own project like a missing one", async () => {
    const aliceProject = await t.createProject(alice);
    const aliceInvocation = (await callTool(t, alice, aliceProject.id, 'list_files', {}).expect(200)).body.invocationId as string;
    const bobProject = await t.createProject(bob);
    const missingInvocation = randomUUID();
    const foreign = await t.http.get(`/v1/projects/${bobProject.id}/invocations/${aliceInvocation}`).set(bob.auth).expect(404);
    const missing = await t.http.get(`/v1/projects/${bobProject.id}/invocations/${missingInvocation}`).set(bob.auth).expect(404);
    expect(foreign.body.error.code).toBe('invocation_not_found');
    expect(withoutRequestId(foreign.text).split(aliceInvocation).join('<id>')).toBe(
      withoutRequestId(missing.text).split(missingInvocation).join('<id>'),
    );
    // It exists: Alice reads it in her own project.
    await t.http.get(`/v1/projects/${aliceProject.id}/invocations/${aliceInvocation}`).set(alice.auth).expect(200);
  });
});
