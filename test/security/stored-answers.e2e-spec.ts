import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { BudgetsRepository } from '../../src/budgets/budgets.repository.js';
import { PrismaService } from '../../src/database/prisma.service.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { connectMcp } from '../e2e/mcp/mcp-test-kit.js';
import { invoke } from './security-helpers.js';

const MiB = 1024 * 1024;
const FILE_BYTES = 200 * 1024;

interface Outcome {
  status: string;
  result?: { content: string };
  error?: { code: string; message: string };
}

// Answers kept after their request was answered are the tenant's stored answers, held to storedAnswerBytes
// like an Idempotency-Key's: an approved call's outcome (tiny arguments parked, a large outcome kept once
// approved) and the result of an MCP task that ran at once (kept an hour). Without the budget, a tenant
// parked calls with a few bytes of arguments each and stored far past it at each approval, and each
// task-augmented tools/call kept its whole result, counted by nobody.
describe('[sec-105] answers kept after their request count against storedAnswerBytes', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t?.close();
  }, 60_000);

  const storedOf = (tenant: TestTenant) => t.app.get(BudgetsRepository).storedAnswerBytes(t.app.get(BudgetsRepository).client, tenant.id);

  const keeperWithBigFile = async (project: { approvalRequired?: string[] } = {}) => {
    const tenant = await t.createTenant();
    await t.setBudgets(tenant, { storedAnswerBytes: MiB });
    const id = (await t.createProject(tenant, project)).id;
    // 200 KiB of text that JSON keeps as it is.
    await writeFile(path.join(t.workspaceOf(id), 'big.txt'), 'x'.repeat(FILE_BYTES));
    return { tenant, project: id };
  };

  it("keeps an approved call's outcome within the budget; past it the approver is answered in full and the requester reads why it was not kept", async () => {
    const { tenant, project } = await keeperWithBigFile({ approvalRequired: ['read_file'] });
    const parked: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await invoke(t, tenant, project, 'read_file', { path: 'big.txt' });
      expect(res.status).toBe(202);
      parked.push(res.body.invocationId as string);
    }
    for (const id of parked) {
      const approved = await t.http.post(`/v1/projects/${project}/invocations/${id}/approve`).set(tenant.deciderAuth).send({}).expect(200);
      // The approver sees what the call answered, whether or not it could be kept.
      expect((approved.body.outcome as Outcome).status).toBe('ok');
      expect((approved.body.outcome as Outcome).result?.content).toHaveLength(FILE_BYTES);
      expect(await storedOf(tenant)).toBeLessThanOrEqual(MiB);
    }
    const outcomes = await Promise.all(
      parked.map(
        async (id) => (await t.http.get(`/v1/projects/${project}/invocations/${id}`).set(tenant.auth).expect(200)).body.outcome as Outcome,
      ),
    );
    const kept = outcomes.filter((o) => o.status === 'ok');
    const notKept = outcomes.filter((o) => o.status !== 'ok');
    // Four outcomes of 200 KiB fit in 1 MiB, not eight.
    expect(kept.length).toBeGreaterThanOrEqual(3);
    expect(kept.every((o) => o.result?.content.length === FILE_BYTES)).toBe(true);
    expect(notKept.length).toBeGreaterThan(0);
    expect(notKept.every((o) => o.error?.code === 'tenant_budget_exceeded')).toBe(true);
    expect(notKept[0].error?.message).toMatch(/ran once and answered ok .* was not kept, .*storedAnswerBytes budget of 1 MiB/);
    // Each call ran once: its audit row says ok.
    const rows = (
      await t.http.get(`/v1/projects/${project}/invocations`).query({ tool: 'read_file', limit: 50 }).set(tenant.auth).expect(200)
    ).body.items as Array<{ status: string }>;
    expect(rows.map((r) => r.status)).toEqual(Array(8).fill('ok'));
    expect((await t.http.get('/v1/usage').set(tenant.auth).expect(200)).body.usage.storedAnswerBytes).toBeLessThanOrEqual(MiB);
  }, 60_000);

  it("keeps an MCP task's result within the budget; past it tasks/result says it was not kept", async () => {
    const { tenant, project } = await keeperWithBigFile();
    const client = await connectMcp(t, project, tenant.auth);
    try {
      const results: Array<{ isError?: boolean; content: unknown }> = [];
      for (let i = 0; i < 8; i++) {
        const stream = client.experimental.tasks.callToolStream(
          { name: 'read_file', arguments: { path: 'big.txt' } },
          CallToolResultSchema,
          {
            task: {},
          },
        );
        const first = await stream.next();
        await stream.return(undefined);
        if (first.done || first.value.type !== 'taskCreated') throw new Error(`expected a task, got ${JSON.stringify(first.value)}`);
        expect(await storedOf(tenant)).toBeLessThanOrEqual(MiB);
        const result = await client.experimental.tasks.getTaskResult(first.value.task.taskId, CallToolResultSchema);
        // A task whose result was not kept has failed: what it holds is an error result.
        expect(first.value.task.status).toBe(result.isError ? 'failed' : 'completed');
        results.push(result);
      }
      const texts = results.map((r) => (r.content as Array<{ text?: string }>).map((c) => c.text ?? '').join(''));
      const kept = results.filter((r) => !r.isError);
      const notKept = texts.filter((_, i) => results[i].isError);
      // A read_file result holds the text twice (content and structuredContent): two fit in 1 MiB.
      expect(kept.length).toBe(2);
      expect(texts.filter((_, i) => !results[i].isError).every((text) => text.length >= FILE_BYTES)).toBe(true);
      expect(notKept.length).toBeGreaterThan(0);
      expect(notKept[0]).toMatch(/ran once and answered ok \(invocation [0-9a-f-]{36}\); .* was not kept, .*storedAnswerBytes/);
      // Calls without a task keep nothing and still answer in full.
      const plain = await client.callTool({ name: 'read_file', arguments: { path: 'big.txt' } });
      expect(plain.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    expect((await t.http.get('/v1/usage').set(tenant.auth).expect(200)).body.usage.storedAnswerBytes).toBeLessThanOrEqual(MiB);
  }, 60_000);

  it('refuses a task-augmented call before it runs while the stored answers fill the budget: the stand-ins of results that did not fit cannot pile up past it', async () => {
    const tenant = await t.createTenant();
    await t.setBudgets(tenant, { storedAnswerBytes: MiB });
    const project = (await t.createProject(tenant)).id;
    // The tenant's answers under Idempotency-Keys fill the budget (their running total, as its triggers keep it).
    await t.app.get(PrismaService).$executeRaw`INSERT INTO tenant_stored_answers (tenant_id, bytes) VALUES (${tenant.id}::uuid, ${MiB})
      ON CONFLICT (tenant_id) DO UPDATE SET bytes = EXCLUDED.bytes`;
    const client = await connectMcp(t, project, tenant.auth);
    try {
      const stream = client.experimental.tasks.callToolStream(
        { name: 'write_file', arguments: { path: 'as-task.txt', content: 'x' } },
        CallToolResultSchema,
        { task: {} },
      );
      const first = await stream.next();
      await stream.return(undefined);
      expect(first.value).toMatchObject({ type: 'error' });
      expect(String((first.value as { error?: Error }).error?.message)).toMatch(
        /did not run: a task keeps its result for an hour, and the tenant's stored answers \(1 MiB\) fill its storedAnswerBytes budget of 1 MiB/,
      );
      expect(existsSync(path.join(t.workspaceOf(project), 'as-task.txt'))).toBe(false);
      // Without a task the call runs, and keeps nothing.
      const plain = await client.callTool({ name: 'write_file', arguments: { path: 'plain.txt', content: 'x' } });
      expect(plain.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    expect(await storedOf(tenant)).toBe(MiB);
  }, 60_000);

  it("counts a waiting tasks/result as a call in progress: a tenant's waiters hold its concurrentCalls places", async () => {
    const tenant = await t.createTenant();
    await t.setBudgets(tenant, { concurrentCalls: 2 });
    const project = (await t.createProject(tenant, { approvalRequired: ['write_file'] })).id;
    const client = await connectMcp(t, project, tenant.auth);
    try {
      const stream = client.experimental.tasks.callToolStream(
        { name: 'write_file', arguments: { path: 'waited.txt', content: 'x' } },
        CallToolResultSchema,
        { task: {} },
      );
      const first = await stream.next();
      await stream.return(undefined);
      if (first.done || first.value.type !== 'taskCreated') throw new Error(`expected a task, got ${JSON.stringify(first.value)}`);
      const { taskId } = first.value.task;
      const waiters = [0, 1].map(() => client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema));
      const usage = async () => (await t.http.get('/v1/usage').set(tenant.auth).expect(200)).body.usage.concurrentCalls as number;
      for (let i = 0; i < 100 && (await usage()) < 2; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await usage()).toBe(2);
      // Both places are held: another call of the tenant is refused, and a third waiter too.
      const refused = await invoke(t, tenant, project, 'list_files', {});
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ code: 'tenant_budget_exceeded', details: { budget: 'concurrentCalls' } });
      await expect(client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).rejects.toThrow(/concurrentCalls budget is 2/);
      const invocationId = /invocation ([0-9a-f-]{36})/.exec(String(first.value.task.statusMessage))?.[1];
      await t.http.post(`/v1/projects/${project}/invocations/${invocationId}/approve`).set(tenant.deciderAuth).send({}).expect(200);
      const answered = await Promise.all(waiters);
      expect(answered.every((r) => !r.isError)).toBe(true);
      expect(await usage()).toBe(0);
    } finally {
      await client.close();
    }
  }, 60_000);
});
