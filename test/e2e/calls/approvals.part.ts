import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { createTestDatabase } from '../../support/test-database.js';
import { mcpClientFor, type TextResult, textOf } from '../mcp/mcp-test-kit.js';
import { EventStream } from '../tools/tool-test-kit.js';

describe('approval of tool calls', () => {
  let t: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
  });
  afterAll(() => t.close());

  const project = async (approvalRequired: string[] = ['write_file'], owner = tenant) => {
    const { id } = await t.createProject(owner, { approvalRequired });
    return { id, dir: t.workspaceOf(id) };
  };
  const write = (projectId: string, file: string, content = 'x', owner = tenant) =>
    t.http
      .post(`/v1/projects/${projectId}/tools/write_file/invoke`)
      .set(owner.auth)
      .send({ arguments: { path: file, content } });
  const decide = (projectId: string, invocationId: string, decision: 'approve' | 'deny', body: object = {}, owner = tenant) =>
    t.http.post(`/v1/projects/${projectId}/invocations/${invocationId}/${decision}`).set(owner.deciderAuth).send(body);
  const invocation = (projectId: string, invocationId: string) =>
    t.http.get(`/v1/projects/${projectId}/invocations/${invocationId}`).set(tenant.auth).expect(200);

  it('sets approvalRequired on a project, naming only tools the project has', async () => {
    const { id } = await t.createProject(tenant);
    const unknown = await t.http
      .patch(`/v1/projects/${id}`)
      .set(tenant.auth)
      .send({ approvalRequired: ['delete_file', 'rm_rf'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'unknown_tool', details: { unknown: ['rm_rf'] } });
    const set = await t.http
      .patch(`/v1/projects/${id}`)
      .set(tenant.auth)
      .send({ approvalRequired: ['delete_file', 'shell_exec'] })
      .expect(200);
    expect(set.body.approvalRequired).toEqual(['delete_file', 'shell_exec']);
    const refusedOnCreate = await t.http
      .post('/v1/projects')
      .set(tenant.auth)
      .send({ name: 'n', slug: `n-${Date.now()}`, approvalRequired: ['nope'] });
    expect(refusedOnCreate.status).toBe(400);
  });

  it('parks a call (202, audit row pending_approval, tool.pending), runs it on approval, and GET holds the result', async () => {
    const p = await project();
    const stream = await EventStream.open(t.port, p.id, tenant);
    try {
      const parked = await write(p.id, 'approved.txt', 'hello');
      expect(parked.status).toBe(202);
      expect(parked.body).toMatchObject({
        status: 'pending_approval',
        tool: 'write_file',
        invocationId: expect.any(String),
        expiresAt: expect.any(String),
      });
      const id = parked.body.invocationId as string;
      await stream.next((e) => e.event === 'tool.pending' && e.data.invocationId === id);
      expect(existsSync(path.join(p.dir, 'approved.txt'))).toBe(false);
      const pending = await invocation(p.id, id);
      const caller = { keyId: tenant.keyId, name: 'default' };
      expect(pending.body).toMatchObject({ status: 'pending_approval', caller, approval: { status: 'pending', decidedAt: null } });
      expect(pending.body.arguments).toEqual({ path: 'approved.txt', content: 'hello' });

      const approved = await decide(p.id, id, 'approve', { reason: 'looks fine' }).expect(200);
      expect(approved.body).toMatchObject({ invocationId: id, decision: 'approved', outcome: { status: 'ok', invocationId: id } });
      expect(await readFile(path.join(p.dir, 'approved.txt'), 'utf8')).toBe('hello');
      const result = await stream.next((e) => e.event === 'tool.result' && e.data.invocationId === id && e.data.status === 'ok');
      expect(result.data).toMatchObject({ caller, decidedBy: { keyId: tenant.deciderKeyId, name: 'decider' } });

      // The row the approved run wrote still names the key that made the call, beside the one that decided it.
      const after = await invocation(p.id, id);
      expect(after.body).toMatchObject({
        id,
        status: 'ok',
        caller,
        decidedBy: { keyId: tenant.deciderKeyId, name: 'decider' },
        approval: { status: 'approved', reason: 'looks fine' },
        outcome: { status: 'ok', result: approved.body.outcome.result },
      });
      // One audit row for the call, replaced by its outcome.
      const log = await t.http.get(`/v1/projects/${p.id}/invocations`).set(tenant.auth).expect(200);
      expect(log.body.items.map((i: { id: string }) => i.id)).toEqual([id]);
    } finally {
      stream.close();
    }
  });

  it('refuses an invalid call as usual instead of parking it, and runs tools not on the list at once', async () => {
    const p = await project();
    const invalid = await t.http
      .post(`/v1/projects/${p.id}/tools/write_file/invoke`)
      .set(tenant.auth)
      .send({ arguments: { path: 'a.txt', content: 1 } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.code).toBe('invalid_arguments');
    await t.http.post(`/v1/projects/${p.id}/tools/list_files/invoke`).set(tenant.auth).send({ arguments: {} }).expect(200);
  });

  it('denies a call with a reason: it never runs, and the caller learns why (GET, tool.denied)', async () => {
    const p = await project();
    const stream = await EventStream.open(t.port, p.id, tenant);
    try {
      const id = (await write(p.id, 'denied.txt').expect(202)).body.invocationId as string;
      const denied = await decide(p.id, id, 'deny', { reason: 'wrong file' }).expect(200);
      expect(denied.body).toMatchObject({ decision: 'denied', outcome: { status: 'denied', error: { code: 'approval_denied' } } });
      expect(denied.body.outcome.error.message).toContain('wrong file');
      const event = await stream.next((e) => e.event === 'tool.denied' && e.data.invocationId === id);
      expect(event.data.error).toMatchObject({ code: 'approval_denied' });
      const after = await invocation(p.id, id);
      expect(after.body).toMatchObject({
        status: 'denied',
        errorCode: 'approval_denied',
        caller: { keyId: tenant.keyId, name: 'default' },
        approval: { status: 'denied', reason: 'wrong file' },
      });
      expect(existsSync(path.join(p.dir, 'denied.txt'))).toBe(false);
    } finally {
      stream.close();
    }
  });

  it('takes a decision once: a second approve or deny answers 409', async () => {
    const p = await project();
    const first = (await write(p.id, 'once.txt').expect(202)).body.invocationId as string;
    await decide(p.id, first, 'approve').expect(200);
    for (const decision of ['approve', 'deny'] as const) {
      const again = await decide(p.id, first, decision);
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({ code: 'approval_already_decided', details: { status: 'approved' } });
    }
    const second = (await write(p.id, 'twice.txt').expect(202)).body.invocationId as string;
    await decide(p.id, second, 'deny').expect(200);
    const late = await decide(p.id, second, 'approve');
    expect(late.status).toBe(409);
    expect(late.body.error.details.status).toBe('denied');
    expect(existsSync(path.join(p.dir, 'twice.txt'))).toBe(false);
  });

  it('runs one of two concurrent approvals of the same call', async () => {
    const p = await project();
    const id = (await write(p.id, 'race.txt').expect(202)).body.invocationId as string;
    const answers = await Promise.all([decide(p.id, id, 'approve'), decide(p.id, id, 'approve'), decide(p.id, id, 'deny')]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
  });

  it("answers 404 to another tenant's approval and leaves the call pending", async () => {
    const p = await project();
    const id = (await write(p.id, 'mine.txt').expect(202)).body.invocationId as string;
    const other = await t.createTenant();
    const theirs = await project([], other);
    const viaMyProject = await decide(p.id, id, 'approve', {}, other);
    expect(viaMyProject.status).toBe(404);
    expect(viaMyProject.body.error.code).toBe('project_not_found');
    const viaTheirProject = await decide(theirs.id, id, 'approve', {}, other);
    expect(viaTheirProject.status).toBe(404);
    expect(viaTheirProject.body.error.code).toBe('approval_not_found');
    expect((await invocation(p.id, id)).body.approval.status).toBe('pending');
    expect(existsSync(path.join(p.dir, 'mine.txt'))).toBe(false);
  });

  it('parks the calls of a batch that need approval and runs the others', async () => {
    const p = await project();
    const res = await t.http
      .post(`/v1/projects/${p.id}/tools/batch`)
      .set(tenant.auth)
      .send({
        calls: [
          { id: 'park', tool: 'write_file', arguments: { path: 'parked.txt', content: 'x' } },
          { id: 'list', tool: 'list_files', arguments: {} },
        ],
      })
      .expect(200);
    expect(res.body.results[0]).toMatchObject({ id: 'park', status: 'pending_approval', invocationId: expect.any(String) });
    expect(res.body.results[1]).toMatchObject({ id: 'list', status: 'ok' });
    expect(existsSync(path.join(p.dir, 'parked.txt'))).toBe(false);
  });

  it('replays a parked call under its Idempotency-Key instead of parking it twice', async () => {
    const p = await project();
    const send = () =>
      t.http
        .post(`/v1/projects/${p.id}/tools/write_file/invoke`)
        .set(tenant.auth)
        .set('Idempotency-Key', 'park-once')
        .send({ arguments: { path: 'k.txt', content: 'x' } });
    const first = await send().expect(202);
    const again = await send().expect(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.invocationId).toBe(first.body.invocationId);
  });

  it('answers an MCP tools/call that needs approval with a result naming its invocation id', async () => {
    const p = await project();
    const client = await mcpClientFor(t, tenant, p.id);
    try {
      const result = (await client.callTool({ name: 'write_file', arguments: { path: 'mcp.txt', content: 'x' } })) as TextResult;
      // write_file declares an output schema, which a parked call's answer is not: it comes as an error result
      // ("not run"), the parked call in _meta.
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toBeUndefined();
      const parked = result._meta?.['dev.toolgate/pendingApproval'] as { status: string; invocationId: string };
      expect(parked).toMatchObject({ status: 'pending_approval', invocationId: expect.any(String) });
      expect(textOf(result)).toContain(parked.invocationId);
      expect(textOf(result)).toMatch(/awaits approval/);
      const caller = { keyId: tenant.keyId, name: 'default' };
      const row = await invocation(p.id, parked.invocationId);
      expect(row.body).toMatchObject({ channel: 'mcp', status: 'pending_approval', caller });
      expect(existsSync(path.join(p.dir, 'mcp.txt'))).toBe(false);
      await decide(p.id, parked.invocationId, 'approve').expect(200);
      expect((await invocation(p.id, parked.invocationId)).body).toMatchObject({ channel: 'mcp', status: 'ok', caller });
    } finally {
      await client.close();
    }
  });

  describe('with a short approval timeout', () => {
    let short: TestApp;
    beforeAll(async () => {
      short = await createTestApp({ env: { APPROVAL_TIMEOUT_MS: '300' } });
    });
    afterAll(() => short.close());

    it('expires a call nobody decided: it never runs, and a late approval answers 409', async () => {
      const owner = await short.createTenant();
      const { id: projectId } = await short.createProject(owner, { approvalRequired: ['write_file'] });
      const parked = await short.http
        .post(`/v1/projects/${projectId}/tools/write_file/invoke`)
        .set(owner.auth)
        .send({ arguments: { path: 'late.txt', content: 'x' } })
        .expect(202);
      const id = parked.body.invocationId as string;
      let row: { status: string; errorCode: string | null; caller: unknown; approval: { status: string } } | undefined;
      for (let i = 0; i < 100; i++) {
        row = (await short.http.get(`/v1/projects/${projectId}/invocations/${id}`).set(owner.auth).expect(200)).body;
        if (row!.status !== 'pending_approval') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(row).toMatchObject({
        status: 'expired',
        errorCode: 'approval_expired',
        caller: { keyId: owner.keyId, name: 'default' },
        approval: { status: 'expired' },
      });
      const late = await short.http.post(`/v1/projects/${projectId}/invocations/${id}/approve`).set(owner.deciderAuth).send({});
      expect(late.status).toBe(409);
      expect(late.body.error.code).toBe('approval_expired');
      expect(existsSync(path.join(short.config.workspace.root!, projectId, 'late.txt'))).toBe(false);
    });
  });

  it('keeps parked calls through a shutdown and a restart; they can be approved afterwards', async () => {
    const database = await createTestDatabase();
    const closeDatabase = database.driver.close.bind(database.driver);
    database.driver.close = () => Promise.resolve();
    const workspaces = await mkdtemp(path.join(os.tmpdir(), 'toolgate-restart-'));
    await chmod(workspaces, 0o711);
    const env = { WORKSPACE_ROOT: workspaces };
    try {
      const before = await createTestApp({ database, env });
      const owner = await before.createTenant();
      const { id: projectId } = await before.createProject(owner, { approvalRequired: ['write_file'] });
      const parked = await before.http
        .post(`/v1/projects/${projectId}/tools/write_file/invoke`)
        .set(owner.auth)
        .send({ arguments: { path: 'kept.txt', content: 'after restart' } })
        .expect(202);
      await before.close();

      const after = await createTestApp({ database, env });
      try {
        const id = parked.body.invocationId as string;
        const row = await after.http.get(`/v1/projects/${projectId}/invocations/${id}`).set(owner.auth).expect(200);
        expect(row.body).toMatchObject({ status: 'pending_approval', approval: { status: 'pending' } });
        await after.http.post(`/v1/projects/${projectId}/invocations/${id}/approve`).set(owner.deciderAuth).send({}).expect(200);
        expect(await readFile(path.join(workspaces, projectId, 'kept.txt'), 'utf8')).toBe('after restart');
        // Its caller came back from the database with it, not from a key in memory.
        const done = await after.http.get(`/v1/projects/${projectId}/invocations/${id}`).set(owner.auth).expect(200);
        expect(done.body).toMatchObject({ status: 'ok', caller: { keyId: owner.keyId, name: 'default' } });
      } finally {
        await after.close();
      }
    } finally {
      await closeDatabase();
      await database.close();
      await rm(workspaces, { recursive: true, force: true });
    }
  });
});
