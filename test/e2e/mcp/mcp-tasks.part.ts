import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { connectMcp, mcpClientFor, postModern, refusedWith, type TextResult, textOf } from './mcp-test-kit.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const RELATED = 'io.modelcontextprotocol/related-task';
const DECLARED = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } };
const NOT_FOUND = { code: ErrorCode.InvalidParams, message: expect.stringMatching(/Task not found/) };

interface AuditRow {
  status: string;
  errorCode: string | null;
  decidedBy: { keyId: string } | null;
}

// A call that parks for a person comes back as a task where the client asked for one, and the client picks
// its result up once a person decides; the task answers only to the key that made the call.
describe('MCP tasks for calls parked for approval', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let otherProjectId: string;
  let client: Client;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant, { approvalRequired: ['write_file'] })).id;
    otherProjectId = (await t.createProject(tenant, { approvalRequired: ['write_file'] })).id;
    client = await mcpClientFor(t, tenant, projectId);
    await client.listTools();
  });
  afterAll(async () => {
    await client?.close();
    await t.close();
  });

  const agentKey = async (owner: TestTenant, projects: string[]) => ({
    Authorization: `Bearer ${(await t.http.post('/v1/api-keys').set(owner.auth).send({ name: 'agent', role: 'agent', projectIds: projects }).expect(201)).body.key as string}`,
  });
  const decide = (invocationId: string, decision: 'approve' | 'deny', body: object = {}) =>
    t.http.post(`/v1/projects/${projectId}/invocations/${invocationId}/${decision}`).set(tenant.deciderAuth).send(body);
  const auditRow = async (invocationId: string) =>
    (await t.http.get(`/v1/projects/${projectId}/invocations/${invocationId}`).set(tenant.auth).expect(200)).body as AuditRow;
  const invocationOf = (statusMessage: unknown) => /invocation ([0-9a-f-]{36})/.exec(String(statusMessage))?.[1] as string;

  // A write_file call as a task (2025-11-25): its CreateTaskResult.
  const parkAsTask = async (file: string, on = client) => {
    const stream = on.experimental.tasks.callToolStream(
      { name: 'write_file', arguments: { path: file, content: `wrote ${file}` } },
      CallToolResultSchema,
      { task: {} },
    );
    const first = await stream.next();
    await stream.return(undefined);
    if (first.done || first.value.type !== 'taskCreated') throw new Error(`expected a task, got ${JSON.stringify(first.value)}`);
    return first.value.task;
  };

  describe('under protocol revision 2025-11-25 (the SDK client)', () => {
    it('declares tasks for tools/call, list and cancel, and lists every tool as one that may run as a task', async () => {
      expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
      const { tools } = await client.listTools();
      expect(tools.find((tool) => tool.name === 'write_file')?.execution).toEqual({ taskSupport: 'optional' });
    });

    it('answers a parked call with a working task; once approved, tasks/result holds what the call answered', async () => {
      const task = await parkAsTask('approved.txt');
      expect(task).toMatchObject({
        status: 'working',
        pollInterval: expect.any(Number),
        ttl: expect.any(Number),
        statusMessage: expect.stringMatching(/awaits approval by a person/i),
      });
      expect(task.taskId).toMatch(/^[A-Za-z0-9_-]{32}$/);
      const id = invocationOf(task.statusMessage);
      expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('working');
      expect(existsSync(path.join(t.workspaceOf(projectId), 'approved.txt'))).toBe(false);

      // tasks/result waits for the decision, taken by a person on the REST route.
      const waiting = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      await decide(id, 'approve').expect(200);
      const result = (await waiting) as TextResult;
      expect(result.isError).toBeUndefined();
      expect(result._meta?.[RELATED]).toEqual({ taskId: task.taskId });
      expect(result.structuredContent).toMatchObject({ path: 'approved.txt' });
      expect(await readFile(path.join(t.workspaceOf(projectId), 'approved.txt'), 'utf8')).toBe('wrote approved.txt');
      const done = await client.experimental.tasks.getTask(task.taskId);
      expect(done).toMatchObject({ taskId: task.taskId, status: 'completed' });
      expect(done.pollInterval).toBeUndefined();
    });

    it('lets a key keep 8 tasks/result requests waiting on an instance; the 9th is told to poll', async () => {
      const tasks = [];
      for (let i = 0; i < 9; i++) tasks.push(await parkAsTask(`waited-${i}.txt`));
      // Nine at once: whichever arrives ninth is refused at once; the others wait for their decisions.
      const answers = tasks.map((task) =>
        client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema).then(
          (result) => ({ result: result }),
          (error: { code: number; message: string }) => ({ error }),
        ),
      );
      expect(await Promise.race(answers)).toMatchObject({
        error: { code: ErrorCode.InvalidRequest, message: expect.stringMatching(/poll with tasks\/get/) },
      });
      for (const task of tasks) await decide(invocationOf(task.statusMessage), 'deny').expect(200);
      const settled = await Promise.all(answers);
      expect(settled.filter((answer) => 'error' in answer)).toHaveLength(1);
      expect(settled.filter((answer) => 'result' in answer && answer.result.isError === true)).toHaveLength(8);
      const refused = tasks[settled.findIndex((answer) => 'error' in answer)];
      expect(((await client.experimental.tasks.getTaskResult(refused.taskId, CallToolResultSchema)) as TextResult).isError).toBe(true);
    });

    it('drives a parked call to its result through callToolStream while a person approves', async () => {
      const stream = client.experimental.tasks.callToolStream(
        { name: 'write_file', arguments: { path: 'streamed.txt', content: 's' } },
        CallToolResultSchema,
        { task: {} },
      );
      const seen: string[] = [];
      for await (const message of stream) {
        seen.push(message.type);
        if (message.type === 'taskCreated') await decide(invocationOf(message.task.statusMessage), 'approve').expect(200);
        if (message.type === 'result') expect((message.result as TextResult).structuredContent).toMatchObject({ path: 'streamed.txt' });
        if (message.type === 'error') throw message.error;
      }
      expect(seen[0]).toBe('taskCreated');
      expect(seen.at(-1)).toBe('result');
    });

    it('fails the task of a denied call; tasks/result answers the denial as an error result', async () => {
      const task = await parkAsTask('denied.txt');
      await decide(invocationOf(task.statusMessage), 'deny', { reason: 'not today' }).expect(200);
      expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({
        status: 'failed',
        statusMessage: expect.stringMatching(/denied this call: not today/),
      });
      const result = (await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as TextResult;
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/A person denied this call: not today\. It did not run\./);
      expect(existsSync(path.join(t.workspaceOf(projectId), 'denied.txt'))).toBe(false);
    });

    it('cancels a parked call: withdrawn, audited as denied by its own key, never run, and no longer decidable', async () => {
      const task = await parkAsTask('withdrawn.txt');
      const id = invocationOf(task.statusMessage);
      const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
      expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
      expect(await auditRow(id)).toMatchObject({ status: 'denied', errorCode: 'approval_withdrawn', decidedBy: { keyId: tenant.keyId } });
      expect((await decide(id, 'approve')).status).toBe(409);
      expect(existsSync(path.join(t.workspaceOf(projectId), 'withdrawn.txt'))).toBe(false);
      expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('cancelled');
      expect(textOf((await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as TextResult)).toMatch(
        /withdrew it/,
      );
      expect(await refusedWith(client.experimental.tasks.cancelTask(task.taskId))).toMatchObject({
        code: ErrorCode.InvalidParams,
        message: expect.stringMatching(/terminal status 'cancelled'/),
      });
    });

    it('answers a call that runs at once (no approval needed) with a completed task holding its result', async () => {
      const stream = client.experimental.tasks.callToolStream({ name: 'list_files', arguments: { path: '.' } }, CallToolResultSchema, {
        task: {},
      });
      const messages = [];
      for await (const message of stream) messages.push(message);
      expect(messages[0]).toMatchObject({ type: 'taskCreated', task: { status: 'completed' } });
      expect(messages.at(-1)).toMatchObject({ type: 'result', result: { structuredContent: expect.any(Object) } });
    });

    it('answers a call parked through a toolset (under the name the toolset gives) as a task too', async () => {
      await t.http
        .post(`/v1/projects/${projectId}/toolsets`)
        .set(tenant.auth)
        .send({ slug: 'saver', name: 'Saver', mode: 'direct', tools: [{ select: 'write_file', name: 'save' }] })
        .expect(201);
      const toolset = await connectMcp(t, projectId, tenant.auth, '/toolsets/saver/mcp');
      try {
        await toolset.listTools();
        const stream = toolset.experimental.tasks.callToolStream(
          { name: 'save', arguments: { path: 'saved.txt', content: 'kept' } },
          CallToolResultSchema,
          { task: {} },
        );
        const first = await stream.next();
        await stream.return(undefined);
        if (first.done || first.value.type !== 'taskCreated') throw new Error('expected a task');
        const { task } = first.value;
        await decide(invocationOf(task.statusMessage), 'approve').expect(200);
        const result = (await toolset.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as TextResult;
        expect(result.structuredContent).toMatchObject({ path: 'saved.txt' });
        expect(await readFile(path.join(t.workspaceOf(projectId), 'saved.txt'), 'utf8')).toBe('kept');
      } finally {
        await toolset.close();
      }
    });

    it('keeps the parked answer for a client that does not ask for a task', async () => {
      const result = (await client.callTool({ name: 'write_file', arguments: { path: 'plain.txt', content: 'p' } })) as TextResult;
      expect(textOf(result)).toMatch(/awaits approval by a person and has not run yet/);
      expect(result._meta?.['dev.toolgate/pendingApproval']).toMatchObject({ status: 'pending_approval' });
    });

    it('answers a params.task in a batch of revision 2025-03-26 (which has no tasks, nor tasks/get) plainly, not with a task', async () => {
      const res = await t.http
        .post(`/v1/projects/${projectId}/mcp`)
        .set({ ...tenant.auth, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' })
        .send([
          {
            jsonrpc: '2.0',
            id: 'old-1',
            method: 'tools/call',
            params: { name: 'write_file', arguments: { path: 'old-revision.txt', content: 'o' }, task: {} },
          },
        ])
        .expect(200);
      // The SDK's transport answers a batch of one request with the one response.
      const answer = res.body as { id: string; result: TextResult & { task?: unknown } };
      expect(answer.id).toBe('old-1');
      expect(answer.result.task).toBeUndefined();
      expect(textOf(answer.result)).toMatch(/awaits approval by a person and has not run yet/);
    });

    it('lists only the caller’s tasks, in pages', async () => {
      const mine = await parkAsTask('listed.txt');
      const { tasks } = await client.experimental.tasks.listTasks();
      expect(tasks.map((task) => task.taskId)).toContain(mine.taskId);
      const other = await connectMcp(t, projectId, await agentKey(tenant, [projectId]));
      try {
        expect((await other.experimental.tasks.listTasks()).tasks).toEqual([]);
      } finally {
        await other.close();
      }
      expect(await refusedWith(client.experimental.tasks.listTasks('bm90LWEtY3Vyc29y'))).toMatchObject({ code: ErrorCode.InvalidParams });

      // 51 tasks of a key of their own: a page of 50, then the one left, none twice.
      const pager = await connectMcp(t, projectId, await agentKey(tenant, [projectId]));
      try {
        await pager.listTools();
        for (let i = 0; i < 51; i++) {
          const stream = pager.experimental.tasks.callToolStream({ name: 'list_files', arguments: { path: '.' } }, CallToolResultSchema, {
            task: {},
          });
          expect((await stream.next()).value).toMatchObject({ type: 'taskCreated' });
          await stream.return(undefined);
        }
        const first = await pager.experimental.tasks.listTasks();
        expect(first.tasks).toHaveLength(50);
        const second = await pager.experimental.tasks.listTasks(first.nextCursor);
        expect(second.tasks).toHaveLength(1);
        expect(second.nextCursor).toBeUndefined();
        expect(new Set([...first.tasks, ...second.tasks].map((task) => task.taskId)).size).toBe(51);
      } finally {
        await pager.close();
      }
    });

    it('answers another key, another project and another tenant as for an unknown task id, and lets none of them cancel it', async () => {
      const task = await parkAsTask('guarded.txt');
      const id = invocationOf(task.statusMessage);
      const stranger = await t.createTenant();
      const strangerProject = (await t.createProject(stranger)).id;
      const others = [
        await connectMcp(t, projectId, await agentKey(tenant, [projectId])),
        await connectMcp(t, otherProjectId, tenant.auth),
        await connectMcp(t, strangerProject, stranger.auth),
      ];
      try {
        const unknown = await refusedWith(client.experimental.tasks.getTask('A'.repeat(32)));
        expect(unknown).toMatchObject(NOT_FOUND);
        for (const other of others) {
          expect(await refusedWith(other.experimental.tasks.getTask(task.taskId))).toEqual(unknown);
          expect(await refusedWith(other.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema))).toEqual(unknown);
          expect(await refusedWith(other.experimental.tasks.cancelTask(task.taskId))).toEqual(unknown);
        }
      } finally {
        for (const other of others) await other.close();
      }
      expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('working');
      expect((await auditRow(id)).status).toBe('pending_approval');
    });
  });

  describe('with a short approval timeout', () => {
    let short: TestApp;
    beforeAll(async () => {
      short = await createTestApp({ env: { APPROVAL_TIMEOUT_MS: '300' } });
    });
    afterAll(() => short.close());

    it('fails the task of a call nobody decided: tasks/result waits for the expiry and answers it as an error result', async () => {
      const owner = await short.createTenant();
      const { id } = await short.createProject(owner, { approvalRequired: ['write_file'] });
      const expiring = await connectMcp(short, id, owner.auth);
      try {
        await expiring.listTools();
        const task = await parkAsTask('late.txt', expiring);
        const result = (await expiring.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as TextResult;
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(/expired and did not run/);
        expect(await expiring.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'failed' });
        expect(existsSync(path.join(short.workspaceOf(id), 'late.txt'))).toBe(false);
      } finally {
        await expiring.close();
      }
    });
  });

  describe('under protocol revision 2026-07-28 (the tasks extension)', () => {
    const post = (method: string, params: Record<string, unknown>, name?: string, auth = tenant.auth) =>
      postModern(t, projectId, auth, method, params, name);
    const park = async (file: string, meta: Record<string, unknown> = DECLARED) =>
      (await post('tools/call', { name: 'write_file', arguments: { path: file, content: file }, _meta: meta }, 'write_file')).body.result;
    const get = (taskId: string, auth = tenant.auth) => post('tasks/get', { taskId, _meta: DECLARED }, taskId, auth);

    it('declares the extension in server/discover', async () => {
      expect((await post('server/discover', {})).body.result.capabilities.extensions).toEqual({ [TASKS]: {} });
    });

    it('answers a parked call with a task where the client declared the extension, and the parked result where it did not', async () => {
      expect(await park('undeclared.txt', {})).toMatchObject({
        resultType: 'complete',
        _meta: { 'dev.toolgate/pendingApproval': { status: 'pending_approval' } },
      });
      const task = await park('modern.txt');
      expect(task).toMatchObject({ resultType: 'task', status: 'working', ttlMs: expect.any(Number), pollIntervalMs: expect.any(Number) });
      const working = await get(task.taskId);
      expect(working.body.result).toMatchObject({ resultType: 'complete', taskId: task.taskId, status: 'working' });
      await decide(invocationOf(task.statusMessage), 'approve').expect(200);
      const done = (await get(task.taskId)).body.result;
      expect(done).toMatchObject({ resultType: 'complete', status: 'completed', result: { structuredContent: { path: 'modern.txt' } } });
      expect(done.pollIntervalMs).toBeUndefined();
    });

    it('completes (not fails) the task of a denied call, its result the denial', async () => {
      const task = await park('modern-denied.txt');
      await decide(invocationOf(task.statusMessage), 'deny').expect(200);
      expect((await get(task.taskId)).body.result).toMatchObject({ status: 'completed', result: { isError: true } });
    });

    it('acknowledges tasks/cancel and tasks/update; the cancel withdraws the call', async () => {
      const task = await park('modern-cancel.txt');
      expect(
        (await post('tasks/update', { taskId: task.taskId, inputResponses: { x: {} }, _meta: DECLARED }, task.taskId)).body.result,
      ).toEqual({ resultType: 'complete' });
      expect((await post('tasks/cancel', { taskId: task.taskId, _meta: DECLARED }, task.taskId)).body.result).toEqual({
        resultType: 'complete',
      });
      expect((await get(task.taskId)).body.result).toMatchObject({ status: 'cancelled' });
      expect((await auditRow(invocationOf(task.statusMessage))).errorCode).toBe('approval_withdrawn');
    });

    it('refuses the task methods to a client that does not declare the extension (-32021), and a Mcp-Name that is not the task (-32020)', async () => {
      const task = await park('modern-refusals.txt');
      const undeclared = await post('tasks/get', { taskId: task.taskId }, task.taskId);
      expect(undeclared.body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } });
      expect(await post('tasks/get', { taskId: task.taskId, _meta: DECLARED }, 'another')).toMatchObject({
        status: 400,
        body: { error: { code: -32020 } },
      });
    });

    it('answers another key of the tenant as for an unknown task id', async () => {
      const task = await park('modern-guarded.txt');
      const unknown = (await get('B'.repeat(32))).body.error;
      expect(unknown).toMatchObject(NOT_FOUND);
      const other = await agentKey(tenant, [projectId]);
      expect((await get(task.taskId, other)).body.error).toEqual(unknown);
      expect((await post('tasks/cancel', { taskId: task.taskId, _meta: DECLARED }, task.taskId, other)).body.error).toEqual(unknown);
      expect((await get(task.taskId)).body.result.status).toBe('working');
    });
  });
});
