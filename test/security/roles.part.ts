import { existsSync } from 'node:fs';
import http from 'node:http';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Test } from 'supertest';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { EventStream } from '../e2e/tools/tool-test-kit.js';

// docs/security-model.md, "Roles" (cases 77-86): an agent's credential cannot change its own rules, and a person
// approves. Over REST, batch and MCP against the real app, with keys of each role made through the API.

type Auth = { Authorization: string };

// Which roles may use each tenant route. Every tenant operation of the OpenAPI document must be here (a new
// route fails the matrix until someone decides who may use it) and must agree with what the document says.
const ROUTE_ROLES: Record<string, Array<'admin' | 'agent' | 'approver'>> = {
  listApiKeys: ['admin'],
  // The tenant's budgets and usage: what an operator of the tenant reads, like its keys.
  getUsage: ['admin'],
  createApiKey: ['admin'],
  revokeApiKey: ['admin'],
  createProject: ['admin'],
  listProjects: ['admin', 'agent', 'approver'],
  getProject: ['admin', 'agent', 'approver'],
  updateProject: ['admin'],
  deleteProject: ['admin'],
  getWorkspace: ['admin', 'approver'],
  listWorkspaceFiles: ['admin', 'approver'],
  readWorkspaceFile: ['admin', 'approver'],
  listInvocations: ['admin', 'agent', 'approver'],
  exportInvocations: ['admin'],
  getInvocation: ['admin', 'agent', 'approver'],
  listTools: ['admin', 'agent', 'approver'],
  getTool: ['admin', 'agent', 'approver'],
  streamEvents: ['admin', 'agent', 'approver'],
  mcpMessage: ['admin', 'agent'],
  mcpOpenStream: ['admin', 'agent'],
  mcpEndSession: ['admin', 'agent'],
  createToolset: ['admin'],
  listToolsets: ['admin', 'approver'],
  getToolset: ['admin', 'approver'],
  replaceToolset: ['admin'],
  deleteToolset: ['admin'],
  listToolsetTools: ['admin', 'agent', 'approver'],
  invokeToolsetTool: ['admin', 'agent'],
  toolsetMcpMessage: ['admin', 'agent'],
  toolsetMcpOpenStream: ['admin', 'agent'],
  toolsetMcpEndSession: ['admin', 'agent'],
  invokeTool: ['admin', 'agent'],
  invokeToolBatch: ['admin', 'agent'],
  approveInvocation: ['admin', 'approver'],
  denyInvocation: ['admin', 'approver'],
  registerSkill: ['admin'],
  listSkills: ['admin'],
  getSkill: ['admin'],
  updateSkill: ['admin'],
  deleteSkill: ['admin'],
  refreshSkill: ['admin'],
  listSkillChanges: ['admin'],
  acceptSkillChange: ['admin'],
  rejectSkillChange: ['admin'],
  enableProjectSkill: ['admin'],
  listProjectSkills: ['admin'],
  disableProjectSkill: ['admin'],
  getOAuthRequest: ['admin', 'approver'],
  decideOAuthRequest: ['admin', 'approver'],
  // Policies: only admin keys set them; an approver reads them (why a call parks) and asks what they decide;
  // the schema is public to every key of the tenant.
  getPolicySchema: ['admin', 'agent', 'approver'],
  getTenantPolicies: ['admin', 'approver'],
  setTenantPolicies: ['admin'],
  getProjectPolicies: ['admin', 'approver'],
  setProjectPolicies: ['admin'],
  checkPolicies: ['admin', 'approver'],
  // Connections: a provider holds the tenant's client secret, a link connects whoever opens it.
  createAuthProvider: ['admin'],
  listAuthProviders: ['admin'],
  getAuthProvider: ['admin'],
  updateAuthProvider: ['admin'],
  deleteAuthProvider: ['admin'],
  authorizeConnection: ['admin'],
  listConnections: ['admin'],
  revokeConnection: ['admin'],
  // Approval routes: where every parked call of a project is announced, and what was sent there.
  createApprovalRoute: ['admin'],
  listApprovalRoutes: ['admin'],
  deleteApprovalRoute: ['admin'],
  listApprovalDeliveries: ['admin'],
  // The tenant's app, which names its users with an actAsUsers key, confirms who completed a link.
  verifyConnection: ['admin', 'agent'],
};

describe('roles on keys', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let p: string;
  let q: string;
  let agent: Auth;
  let readOnlyAgent: Auth;
  let approver: Auth;
  let agentOfQ: Auth;

  const issue = async (body: Record<string, unknown>, via: Auth = tenant.auth) => {
    const res = await t.http.post('/v1/api-keys').set(via).send(body);
    expect({ status: res.status, body: res.status === 201 ? 'ok' : res.body }).toEqual({ status: 201, body: 'ok' });
    return { id: res.body.id as string, auth: { Authorization: `Bearer ${res.body.key}` } };
  };
  const invoke = (auth: Auth, project: string, tool: string, args: object) =>
    t.http.post(`/v1/projects/${project}/tools/${tool}/invoke`).set(auth).send({ arguments: args });
  const mcp = async (auth: Auth, project: string, body: unknown) => {
    const port = t.port;
    const res = await fetch(`http://127.0.0.1:${port}/v1/projects/${project}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth },
      body: JSON.stringify(body),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON-RPC answers of several shapes, read field by field
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const refusedForRole = (res: { status: number; body: { error?: { code: string } } }) =>
    expect([res.status, res.body.error?.code]).toEqual([403, 'forbidden_for_role']);

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    p = (await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['sh'], approvalRequired: ['delete_file'] })).id;
    q = (await t.createProject(tenant)).id;
    await writeFile(path.join(t.workspaceOf(p), 'notes.txt'), 'hello');
    agent = (await issue({ name: 'agent', role: 'agent', projectIds: [p] })).auth;
    readOnlyAgent = (await issue({ name: 'reader', role: 'agent', projectIds: [p], tools: ['read_*', 'list_files'] })).auth;
    approver = (await issue({ name: 'approver', role: 'approver' })).auth;
    agentOfQ = (await issue({ name: 'agent-q', role: 'agent', projectIds: [q] })).auth;
  });
  afterAll(() => t.close());

  it('refuses a key grant that does not hold together, and shows each key with its role', async () => {
    for (const body of [
      { role: 'agent' },
      { role: 'admin', projectIds: [p] },
      { role: 'approver', tools: ['read_file'] },
      { role: 'agent', projectIds: [p], expiresAt: '2000-01-01T00:00:00Z' },
    ]) {
      const res = await t.http.post('/v1/api-keys').set(tenant.auth).send(body);
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status: 400, code: 'invalid_key_grant' });
    }
    const other = await t.createTenant();
    const foreign = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ role: 'agent', projectIds: [(await t.createProject(other)).id] });
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'project_not_found']);
    const keys = (await t.http.get('/v1/api-keys').set(tenant.auth).expect(200)).body.items as Array<Record<string, unknown>>;
    expect(keys.find((k) => k.name === 'reader')).toMatchObject({
      role: 'agent',
      projectIds: [p],
      tools: ['read_*', 'list_files'],
      expiresAt: null,
      lastUsedAt: null,
    });
    expect(keys.find((k) => k.name === 'default')).toMatchObject({ role: 'admin', projectIds: [], tools: [] });
  });

  it('[sec-77] an agent key cannot change its own rules: no project changes, skills, keys, decisions, browsing or export', async () => {
    const attempts: Array<[string, () => Test]> = [
      [
        'PATCH project',
        () =>
          t.http
            .patch(`/v1/projects/${p}`)
            .set(agent)
            .send({ approvalRequired: [], shellAllowlist: ['sh', '/usr/bin/python3'] }),
      ],
      ['DELETE project', () => t.http.delete(`/v1/projects/${p}`).set(agent)],
      ['create project', () => t.http.post('/v1/projects').set(agent).send({ name: 'x', slug: 'agent-made' })],
      ['register skill', () => t.http.post('/v1/skills').set(agent).send({})],
      ['enable skill', () => t.http.post(`/v1/projects/${p}/skills`).set(agent).send({ skillId: p })],
      ['create key', () => t.http.post('/v1/api-keys').set(agent).send({ role: 'admin' })],
      ['list keys', () => t.http.get('/v1/api-keys').set(agent)],
      ['revoke key', () => t.http.delete(`/v1/api-keys/${p}`).set(agent)],
      ['approve', () => t.http.post(`/v1/projects/${p}/invocations/${p}/approve`).set(agent).send({})],
      ['deny', () => t.http.post(`/v1/projects/${p}/invocations/${p}/deny`).set(agent).send({})],
      ['browse', () => t.http.get(`/v1/projects/${p}/workspace/file`).query({ path: 'notes.txt' }).set(agent)],
      ['export', () => t.http.get(`/v1/projects/${p}/invocations/export`).set(agent)],
    ];
    for (const [what, attempt] of attempts) {
      const res = await attempt();
      expect({ what, status: res.status, code: res.body.error?.code }).toEqual({ what, status: 403, code: 'forbidden_for_role' });
    }
    expect(JSON.stringify((await t.http.patch(`/v1/projects/${p}`).set(agent).send({})).body)).toMatch(
      /agent key may not do this.*admin key/,
    );
    // What it may do, on its own project.
    await t.http.get('/v1/projects').set(agent).expect(200);
    expect((await invoke(agent, p, 'read_file', { path: 'notes.txt' }).expect(200)).body.result.content).toBe('hello');
    await t.http
      .post(`/v1/projects/${p}/tools/batch`)
      .set(agent)
      .send({ calls: [{ id: 'a', tool: 'list_files', arguments: {} }] })
      .expect(200);
    expect((await mcp(agent, p, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(200);
    await t.http.get(`/v1/projects/${p}/invocations`).set(agent).expect(200);
  });

  it('[sec-78] an agent bound to some tools neither lists nor calls the others, over REST, batch and MCP', async () => {
    for (const format of ['native', 'openai', 'anthropic', 'mcp']) {
      const listed = JSON.stringify((await t.http.get(`/v1/projects/${p}/tools`).query({ format }).set(readOnlyAgent).expect(200)).body);
      expect({
        format,
        read: listed.includes('read_file'),
        write: listed.includes('write_file'),
        shell: listed.includes('shell_exec'),
      }).toEqual({
        format,
        read: true,
        write: false,
        shell: false,
      });
    }
    const missing = await t.http.get(`/v1/projects/${p}/tools/write_file`).set(readOnlyAgent);
    expect([missing.status, missing.body.error.code]).toEqual([404, 'tool_not_found']);
    const rest = await invoke(readOnlyAgent, p, 'write_file', { path: 'rest.txt', content: 'x' });
    expect([rest.status, rest.body.error.code]).toEqual([404, 'tool_not_found']);
    expect(JSON.stringify(rest.body)).not.toContain('shell_exec');
    const batch = await t.http
      .post(`/v1/projects/${p}/tools/batch`)
      .set(readOnlyAgent)
      .send({
        calls: [
          { id: 'w', tool: 'write_file', arguments: { path: 'batch.txt', content: 'x' } },
          { id: 'r', tool: 'read_file', arguments: { path: 'notes.txt' } },
        ],
      })
      .expect(200);
    expect(batch.body.results.map((r: { status: string; error?: { code: string } }) => [r.status, r.error?.code])).toEqual([
      ['denied', 'tool_not_found'],
      ['ok', undefined],
    ]);
    const listedOverMcp = await mcp(readOnlyAgent, p, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(listedOverMcp.body.result.tools.map((tool: { name: string }) => tool.name).sort()).toEqual([
      'list_files',
      'read_file',
      'read_multiple_files',
    ]);
    const calledOverMcp = await mcp(readOnlyAgent, p, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'write_file', arguments: { path: 'mcp.txt', content: 'x' } },
    });
    // An unknown tool is a JSON-RPC -32602 over MCP.
    expect(calledOverMcp.body.error).toMatchObject({ code: -32602, message: expect.stringContaining("No tool named 'write_file'") });
    for (const file of ['rest.txt', 'batch.txt', 'mcp.txt']) expect(existsSync(path.join(t.workspaceOf(p), file))).toBe(false);
    // An answer stored under an Idempotency-Key by a key that may use the tool is not replayed to one that
    // may not: it is refused like any other call of that tool, and audited.
    const body = { arguments: { path: 'keyed.txt', content: 'by admin' } };
    await t.http
      .post(`/v1/projects/${p}/tools/write_file/invoke`)
      .set(tenant.auth)
      .set('Idempotency-Key', 'shared-78')
      .send(body)
      .expect(200);
    const replay = await t.http
      .post(`/v1/projects/${p}/tools/write_file/invoke`)
      .set(readOnlyAgent)
      .set('Idempotency-Key', 'shared-78')
      .send(body);
    expect([replay.status, replay.body.error?.code, replay.headers['idempotent-replayed']]).toEqual([404, 'tool_not_found', undefined]);
    const probe = await t.http
      .post(`/v1/projects/${p}/tools/write_file/invoke`)
      .set(readOnlyAgent)
      .set('Idempotency-Key', 'shared-78')
      .send({ arguments: { path: 'other.txt', content: 'x' } });
    expect([probe.status, probe.body.error?.code]).toEqual([404, 'tool_not_found']);
    const keyedBatch = await t.http
      .post(`/v1/projects/${p}/tools/batch`)
      .set(readOnlyAgent)
      .send({ calls: [{ id: 'k', tool: 'write_file', arguments: body.arguments, idempotencyKey: 'shared-78' }] })
      .expect(200);
    expect(keyedBatch.body.results[0]).toMatchObject({ status: 'denied', error: { code: 'tool_not_found' } });
  });

  it('[sec-78] an agent bound to some tools reads neither the audit rows nor the events of the others', async () => {
    const readerKey = { ...tenant, auth: readOnlyAgent };
    const stream = await EventStream.open(t.port, p, readerKey);
    try {
      const written = await invoke(tenant.auth, p, 'write_file', { path: 'secret-78.txt', content: 'WRITTEN-SECRET-78' }).expect(200);
      const read = await invoke(readOnlyAgent, p, 'read_file', { path: 'notes.txt' }).expect(200);
      // Its own tool's event arrives; the write's, sent before it, never did.
      await stream.next((e) => e.data.invocationId === read.body.invocationId);
      expect(stream.events.filter((e) => e.data.invocationId === written.body.invocationId)).toEqual([]);
      const listed = (await t.http.get(`/v1/projects/${p}/invocations`).query({ limit: 100 }).set(readOnlyAgent).expect(200)).body
        .items as Array<{ id: string; tool: string }>;
      expect(listed.map((row) => row.id)).toContain(read.body.invocationId);
      expect(listed.filter((row) => !['read_file', 'read_multiple_files', 'list_files'].includes(row.tool))).toEqual([]);
      expect(
        (await t.http.get(`/v1/projects/${p}/invocations`).query({ tool: 'write_file' }).set(readOnlyAgent).expect(200)).body.items,
      ).toEqual([]);
      const one = await t.http.get(`/v1/projects/${p}/invocations/${written.body.invocationId as string}`).set(readOnlyAgent);
      expect([one.status, one.body.error?.code]).toEqual([404, 'invocation_not_found']);
      // The admin key reads it.
      await t.http
        .get(`/v1/projects/${p}/invocations/${written.body.invocationId as string}`)
        .set(tenant.auth)
        .expect(200);
    } finally {
      stream.close();
    }
  });

  it('[sec-79] an agent bound to P meets project Q of its own tenant as a 404, on every route', async () => {
    const missing = await t.http.get(`/v1/projects/${crypto.randomUUID()}`).set(agentOfQ);
    for (const url of [`/v1/projects/${p}`, `/v1/projects/${p}/tools`, `/v1/projects/${p}/invocations`]) {
      const res = await t.http.get(url).set(agentOfQ);
      expect({ url, status: res.status, body: res.body.error.message.replace(p, 'ID') }).toEqual({
        url,
        status: 404,
        body: missing.body.error.message.replace(/'[^']+'/, `'ID'`),
      });
    }
    expect((await invoke(agentOfQ, p, 'read_file', { path: 'notes.txt' })).status).toBe(404);
    expect(
      (
        await t.http
          .post(`/v1/projects/${p}/tools/batch`)
          .set(agentOfQ)
          .send({ calls: [{ id: 'a', tool: 'list_files', arguments: {} }] })
      ).status,
    ).toBe(404);
    expect((await mcp(agentOfQ, p, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(404);
    const listed = (await t.http.get('/v1/projects').set(agentOfQ).expect(200)).body.items.map((i: { id: string }) => i.id);
    expect(listed).toEqual([q]);
  });

  it('[sec-80] [sec-81] the key that made a parked call cannot decide it; an approver does, and every channel names who decided', async () => {
    const stream = await EventStream.open(t.port, p, tenant);
    try {
      for (const [maker, makerKey] of [
        ['agent', agent],
        ['admin', tenant.auth],
      ] as const) {
        await writeFile(path.join(t.workspaceOf(p), `doomed-${maker}.txt`), 'x');
        const parked = await invoke(makerKey, p, 'delete_file', { path: `doomed-${maker}.txt` }).expect(202);
        const id = parked.body.invocationId as string;
        for (const decision of ['approve', 'deny']) {
          const self = await t.http.post(`/v1/projects/${p}/invocations/${id}/${decision}`).set(makerKey).send({});
          expect({ maker, decision, status: self.status, code: self.body.error?.code }).toEqual({
            maker,
            decision,
            status: 403,
            code: maker === 'agent' ? 'forbidden_for_role' : 'approval_self_decision',
          });
        }
        expect(existsSync(path.join(t.workspaceOf(p), `doomed-${maker}.txt`))).toBe(true);
      }
      const parked = await invoke(agent, p, 'delete_file', { path: 'doomed-agent.txt' }).expect(202);
      const id = parked.body.invocationId as string;
      const approved = await t.http
        .post(`/v1/projects/${p}/invocations/${id}/approve`)
        .set(approver)
        .send({ reason: 'checked' })
        .expect(200);
      const keys = (await t.http.get('/v1/api-keys').set(tenant.auth)).body.items as Array<{ id: string; name: string }>;
      const approverKey = keys.find((k) => k.name === 'approver')!;
      const decidedBy = { keyId: approverKey.id, name: 'approver' };
      expect(approved.body).toMatchObject({ decision: 'approved', decidedBy, outcome: { status: 'ok' } });
      expect(existsSync(path.join(t.workspaceOf(p), 'doomed-agent.txt'))).toBe(false);
      const row = (await t.http.get(`/v1/projects/${p}/invocations/${id}`).set(agent).expect(200)).body;
      expect(row).toMatchObject({ decidedBy, approval: { status: 'approved', decidedBy } });
      const exported = (await t.http.get(`/v1/projects/${p}/invocations/export`).set(tenant.auth).expect(200)).text;
      expect(
        exported
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
          .find((l: { id: string }) => l.id === id),
      ).toMatchObject({ decidedBy });
      const event = await stream.next((e) => e.event === 'tool.result' && e.data.invocationId === id);
      expect(event.data).toMatchObject({ decidedBy });
    } finally {
      stream.close();
    }
  });

  it('[sec-82] an expired key is a 401 that says so, on REST, batch and MCP', async () => {
    const soon = new Date(Date.now() + 1500).toISOString();
    const expiring = (await issue({ name: 'short-lived', role: 'agent', projectIds: [p], expiresAt: soon })).auth;
    await t.http.get('/v1/projects').set(expiring).expect(200);
    await new Promise((r) => setTimeout(r, 1700));
    for (const res of [
      await t.http.get('/v1/projects').set(expiring),
      await invoke(expiring, p, 'read_file', { path: 'notes.txt' }),
      await t.http
        .post(`/v1/projects/${p}/tools/batch`)
        .set(expiring)
        .send({ calls: [{ id: 'a', tool: 'list_files', arguments: {} }] }),
    ]) {
      expect([res.status, res.body.error.code]).toEqual([401, 'api_key_expired']);
      expect(res.body.error.message).toContain('expired');
    }
    const overMcp = await mcp(expiring, p, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect([overMcp.status, overMcp.body.error?.code]).toEqual([401, 'api_key_expired']);
    const events = await t.http.get(`/v1/projects/${p}/events`).set(expiring);
    expect([events.status, events.body.error?.code]).toEqual([401, 'api_key_expired']);
  });

  it('[sec-82] an event stream opened before its key expires is closed at the expiry', async () => {
    const expiring = (
      await issue({ name: 'stream-expiry', role: 'agent', projectIds: [p], expiresAt: new Date(Date.now() + 1200).toISOString() })
    ).auth;
    const port = t.port;
    const opened = Date.now();
    const closedAt = await new Promise<number>((resolve, reject) => {
      const request = http.get(
        { host: '127.0.0.1', port, path: `/v1/projects/${p}/events`, headers: { ...expiring, accept: 'text/event-stream' } },
        (response) => {
          if (response.statusCode !== 200) return reject(new Error(`answered ${response.statusCode}`));
          response.resume();
          response.on('end', () => resolve(Date.now()));
        },
      );
      request.on('error', reject);
      // Far past the expiry: if the stream were still open then, the test fails on this.
      setTimeout(() => reject(new Error('the stream outlived its key by 8 s')), 9000).unref();
    });
    expect(closedAt - opened).toBeGreaterThanOrEqual(1000);
  });

  it('[sec-98] a key revoked while its event stream is open, or while its MCP call runs, is cut off at once', async () => {
    const doomed = await issue({ name: 'doomed', role: 'agent', projectIds: [p] });
    const port = t.port;
    const closed = new Promise<void>((resolve, reject) => {
      const request = http.get(
        { host: '127.0.0.1', port, path: `/v1/projects/${p}/events`, headers: { ...doomed.auth, accept: 'text/event-stream' } },
        (response) => {
          if (response.statusCode !== 200) return reject(new Error(`answered ${response.statusCode}`));
          response.resume();
          response.on('end', () => resolve());
          void t.http.delete(`/v1/api-keys/${doomed.id}`).set(tenant.auth).expect(204).catch(reject);
        },
      );
      request.on('error', reject);
      setTimeout(() => reject(new Error('the stream outlived its revoked key by 5 s')), 5000).unref();
    });
    await closed;

    const running = await issue({ name: 'running', role: 'agent', projectIds: [p] });
    await t.http.patch(`/v1/projects/${p}`).set(tenant.auth).send({ approvalRequired: [] }).expect(200);
    const call = mcp(running.auth, p, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'shell_exec', arguments: { argv: ['sh', '-c', 'sleep 20; echo late > late-98'] } },
    });
    await new Promise((r) => setTimeout(r, 500));
    await t.http.delete(`/v1/api-keys/${running.id}`).set(tenant.auth).expect(204);
    const answer = await call;
    expect(JSON.stringify(answer.body)).toMatch(/cancel/);
    expect(existsSync(path.join(t.workspaceOf(p), 'late-98'))).toBe(false);
    await t.http
      .patch(`/v1/projects/${p}`)
      .set(tenant.auth)
      .send({ approvalRequired: ['delete_file'] })
      .expect(200);
  });

  it('[sec-83] approval classes: @commands parks a command skill, a name alone parks only that tool, @all parks everything', async () => {
    const skill = await t.http
      .post('/v1/skills')
      .set(tenant.auth)
      .send({
        name: 'roles-echo',
        version: '1.0.0',
        description: 'echo',
        tools: [
          {
            name: 'roles_echo',
            description: 'echo',
            inputSchema: { type: 'object', properties: {}, additionalProperties: false },
            executor: { type: 'command', argv: ['sh', '-c', 'echo ran > echoed'] },
          },
        ],
      })
      .expect(201);
    const project = (await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['sh'] })).id;
    await t.http.post(`/v1/projects/${project}/skills`).set(tenant.auth).send({ skillId: skill.body.id }).expect(201);
    await t.http
      .patch(`/v1/projects/${project}`)
      .set(tenant.auth)
      .send({ approvalRequired: ['@commands'] })
      .expect(200);
    expect((await invoke(tenant.auth, project, 'roles_echo', {})).status).toBe(202);
    expect((await invoke(tenant.auth, project, 'shell_exec', { argv: ['sh', '-c', 'true'] })).status).toBe(202);
    expect((await invoke(tenant.auth, project, 'read_file', { path: 'x' })).status).toBe(200);
    expect(existsSync(path.join(t.workspaceOf(project), 'echoed'))).toBe(false);

    await writeFile(path.join(t.workspaceOf(project), 'a.txt'), 'a');
    await t.http
      .patch(`/v1/projects/${project}`)
      .set(tenant.auth)
      .send({ approvalRequired: ['read_file'] })
      .expect(200);
    expect((await invoke(tenant.auth, project, 'read_file', { path: 'a.txt' })).status).toBe(202);
    expect((await invoke(tenant.auth, project, 'read_multiple_files', { paths: ['a.txt'] })).status).toBe(200);

    await t.http
      .patch(`/v1/projects/${project}`)
      .set(tenant.auth)
      .send({ approvalRequired: ['@all'] })
      .expect(200);
    for (const tool of ['read_multiple_files', 'list_files', 'roles_echo']) {
      expect({
        tool,
        status: (await invoke(tenant.auth, project, tool, tool === 'read_multiple_files' ? { paths: ['a.txt'] } : {})).status,
      }).toEqual({ tool, status: 202 });
    }
    const batch = await t.http
      .post(`/v1/projects/${project}/tools/batch`)
      .set(tenant.auth)
      .send({ calls: [{ id: 'l', tool: 'list_files', arguments: {} }] })
      .expect(200);
    expect(batch.body.results[0].status).toBe('pending_approval');
    const overMcp = await mcp(tenant.auth, project, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'list_files', arguments: {} },
    });
    expect(JSON.stringify(overMcp.body)).toContain('pending_approval');
    const refused = await t.http
      .patch(`/v1/projects/${project}`)
      .set(tenant.auth)
      .send({ approvalRequired: ['@everything'] });
    expect([refused.status, refused.body.error.code]).toEqual([400, 'unknown_tool']);
  });

  it("[sec-84] the approver sees a parked call's arguments as they will run; the log, the export, events and other roles see them redacted; at rest they are sealed", async () => {
    const stream = await EventStream.open(t.port, p, tenant);
    try {
      const secret = 'sk-live-planted-84-0123456789';
      await t.http
        .patch(`/v1/projects/${p}`)
        .set(tenant.auth)
        .send({ approvalRequired: ['delete_file', 'fetch_url'] })
        .expect(200);
      const fetchCall = await invoke(agent, p, 'fetch_url', {
        url: 'https://example.invalid/',
        headers: { Authorization: `Bearer ${secret}` },
      }).expect(202);
      const id = fetchCall.body.invocationId as string;
      const asApprover = (await t.http.get(`/v1/projects/${p}/invocations/${id}`).set(approver).expect(200)).body;
      expect(asApprover.approval.pendingArguments).toEqual({
        url: 'https://example.invalid/',
        headers: { Authorization: `Bearer ${secret}` },
      });
      const asAdmin = (await t.http.get(`/v1/projects/${p}/invocations/${id}`).set(tenant.auth).expect(200)).body;
      expect(asAdmin.approval.pendingArguments.headers.Authorization).toBe(`Bearer ${secret}`);
      const asAgent = (await t.http.get(`/v1/projects/${p}/invocations/${id}`).set(agent).expect(200)).body;
      expect(JSON.stringify(asAgent)).not.toContain(secret);
      expect(JSON.stringify((await t.http.get(`/v1/projects/${p}/invocations`).set(approver).expect(200)).body)).not.toContain(secret);
      expect((await t.http.get(`/v1/projects/${p}/invocations/export`).set(tenant.auth).expect(200)).text).not.toContain(secret);
      await stream.next((e) => e.event === 'tool.pending' && e.data.invocationId === id);
      expect(JSON.stringify(stream.events)).not.toContain(secret);
      expect(JSON.stringify(t.logs)).not.toContain(secret);
      const rows = await t.database.driver.withSession((s) =>
        s.query<{ arguments: unknown }>('SELECT arguments FROM parked_calls WHERE id = $1', [id]),
      );
      expect(JSON.stringify(rows)).not.toContain(secret);
      await t.http.post(`/v1/projects/${p}/invocations/${id}/deny`).set(approver).send({}).expect(200);
      const after = (await t.http.get(`/v1/projects/${p}/invocations/${id}`).set(approver).expect(200)).body;
      expect(JSON.stringify(after)).not.toContain(secret);
    } finally {
      stream.close();
    }
  });

  it("[sec-85] a deleted project's invocations stay readable and exportable by admin keys, no one else", async () => {
    const doomed = (await t.createProject(tenant)).id;
    const call = await invoke(tenant.auth, doomed, 'list_files', {}).expect(200);
    const bound = (await issue({ name: 'doomed-approver', role: 'approver', projectIds: [doomed] })).auth;
    await t.http.delete(`/v1/projects/${doomed}`).set(tenant.auth).expect(204);
    const log = await t.http.get(`/v1/projects/${doomed}/invocations`).set(tenant.auth).expect(200);
    expect(log.body.items.map((i: { id: string }) => i.id)).toEqual([call.body.invocationId]);
    await t.http.get(`/v1/projects/${doomed}/invocations/${call.body.invocationId}`).set(tenant.auth).expect(200);
    expect((await t.http.get(`/v1/projects/${doomed}/invocations/export`).set(tenant.auth).expect(200)).text).toContain(
      call.body.invocationId,
    );
    expect((await t.http.get(`/v1/projects/${doomed}/invocations`).set(bound)).status).toBe(404);
    expect((await t.http.get(`/v1/projects/${doomed}/invocations`).set((await t.createTenant()).auth)).status).toBe(404);
  });

  it('[sec-86] reading through the browsing routes is for admin and approver keys, and audited with channel browse', async () => {
    refusedForRole(await t.http.get(`/v1/projects/${p}/workspace/files`).set(agent));
    const read = await t.http.get(`/v1/projects/${p}/workspace/file`).query({ path: 'notes.txt' }).set(approver).expect(200);
    expect(read.body.content).toBe('hello');
    await t.http.get(`/v1/projects/${p}/workspace/files`).set(tenant.auth).expect(200);
    await t.http.get(`/v1/projects/${p}/workspace/file`).query({ path: 'missing.txt' }).set(approver).expect(404);
    const rows = (await t.http.get(`/v1/projects/${p}/invocations`).set(tenant.auth).expect(200)).body.items.filter(
      (i: { channel: string }) => i.channel === 'browse',
    );
    expect(rows.map((r: { tool: string; status: string; arguments: { path: string } }) => [r.tool, r.status, r.arguments.path])).toEqual(
      expect.arrayContaining([
        ['read_file', 'ok', 'notes.txt'],
        ['list_files', 'ok', ''],
        ['read_file', 'error', 'missing.txt'],
      ]),
    );
  });

  it('an agent cannot run a call that leaves no audit row: a lone UTF-16 surrogate in its arguments is audited as U+FFFD', async () => {
    const rest = await invoke(agent, p, 'write_file', { path: 'surrogate.txt', content: 'no row \ud800 here' }).expect(200);
    const overMcp = await mcp(agent, p, {
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'write_file', arguments: { path: 'surrogate-mcp.txt', content: '\udbff' } },
    });
    const mcpId = overMcp.body.result._meta['dev.toolgate/invocationId'] as string;
    const refused = await invoke(agent, p, 'read_file', { path: 'x', encoding: '\ud800' });
    expect(refused.status).toBe(422);
    for (const id of [rest.body.invocationId as string, mcpId]) {
      const row = (await t.http.get(`/v1/projects/${p}/invocations/${id}`).set(tenant.auth).expect(200)).body;
      expect(row.arguments.content).toContain('\ufffd');
    }
    const log = (await t.http.get(`/v1/projects/${p}/invocations`).query({ status: 'invalid_arguments' }).set(tenant.auth).expect(200)).body
      .items;
    expect(
      log.some((i: { tool: string; arguments: { encoding: string } }) => i.tool === 'read_file' && i.arguments.encoding === '\ufffd'),
    ).toBe(true);
    expect(t.logs.filter((l) => String(l.msg).includes('dropped'))).toEqual([]);
  });

  it('the role matrix: every tenant route × {admin, agent, approver, agent of another project, expired}, from the OpenAPI document', async () => {
    const doc = (await t.http.get('/openapi.json').expect(200)).body as {
      paths: Record<
        string,
        Record<string, { operationId: string; security?: Array<Record<string, unknown>>; 'x-toolgate-roles'?: string[] }>
      >;
    };
    const expired = (await issue({ name: 'matrix-expired', role: 'admin', expiresAt: new Date(Date.now() + 800).toISOString() })).auth;
    await new Promise((r) => setTimeout(r, 900));
    const seen: string[] = [];
    for (const [template, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        if (!(op.security ?? []).some((s) => 'tenant-api-key' in s)) continue;
        seen.push(op.operationId);
        const expected = ROUTE_ROLES[op.operationId];
        expect({ op: op.operationId, classified: expected !== undefined }).toEqual({ op: op.operationId, classified: true });
        expect({ op: op.operationId, documented: op['x-toolgate-roles'] ?? ['admin'] }).toEqual({
          op: op.operationId,
          documented: expected,
        });
        const url = template.replace(/\{(\w+)\}/g, (_, name: string) =>
          name === 'projectId' ? p : name === 'toolName' ? 'read_file' : crypto.randomUUID(),
        );
        const send = (auth: Auth) =>
          (t.http as unknown as Record<string, (u: string) => Test>)
            [method](url)
            .set(auth)
            .set('accept', 'application/json, text/event-stream');
        for (const [role, auth] of [
          ['agent', agent],
          ['approver', approver],
        ] as const) {
          if (op.operationId === 'streamEvents' && expected.includes(role)) continue; // an open stream; covered above
          const res = await send(auth).send(method === 'get' || method === 'delete' ? undefined : {});
          const forbidden = res.status === 403 && res.body?.error?.code === 'forbidden_for_role';
          expect({ op: op.operationId, role, forbidden }).toEqual({ op: op.operationId, role, forbidden: !expected.includes(role) });
        }
        const stale = await send(expired);
        expect({ op: op.operationId, status: stale.status, code: stale.body?.error?.code }).toEqual({
          op: op.operationId,
          status: 401,
          code: 'api_key_expired',
        });
        if (template.includes('{projectId}') && expected.includes('agent') && op.operationId !== 'streamEvents') {
          const elsewhere = await send(agentOfQ);
          expect({ op: op.operationId, status: elsewhere.status }).toEqual({ op: op.operationId, status: 404 });
        }
      }
    }
    expect(seen.sort()).toEqual(Object.keys(ROUTE_ROLES).sort());
    // The file read above is still there: nothing in the matrix changed the project.
    expect(await readFile(path.join(t.workspaceOf(p), 'notes.txt'), 'utf8')).toBe('hello');
  });
});
