import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, LATEST_PROTOCOL_VERSION, McpError } from '@modelcontextprotocol/sdk/types.js';
import { eventually } from '../../support/eventually.js';
import { expectNoProcess, uniqueSleep, waitForProcess } from '../../support/processes.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { commandTool, installSkill, skillOf, STRING_ARG } from '../skills/skill-test-kit.js';
import { SHELL_PROJECT } from '../tools/tool-test-kit.js';
import { mcpClientFor, type TextResult, textOf } from './mcp-test-kit.js';

interface InvocationRow {
  id: string;
  tool: string;
  channel: string;
  status: string;
  errorCode: string | null;
  errorMessage: string | null;
  durationMs: number | null;
}

const PROGRESS_EVERY_MS = 150;

// What an MCP client may rely on: a result matches the output schema the tool was listed with (the official
// client checks), an unknown tool is a JSON-RPC error, a cancelled request stops its call, and a long call
// sends progress. Everything through the official SDK client where it can say it, else as raw POSTs.
describe('MCP results that keep their promises, cancellation and progress', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let client: Client;
  let url: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { MCP_PROGRESS_INTERVAL_MS: String(PROGRESS_EVERY_MS) } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant, SHELL_PROJECT)).id;
    const workspace = t.workspaceOf(projectId);
    await mkdir(path.join(workspace, 'dir'));
    await writeFile(path.join(workspace, 'dir', 'a.txt'), 'alpha\nbeta\n');
    // A skill promising { stdout } that starts with "ok": it keeps that promise for some inputs only.
    const outputSchema = { type: 'object', properties: { stdout: { type: 'string', pattern: '^ok' } }, required: ['stdout'] };
    await installSkill(
      t,
      tenant,
      projectId,
      skillOf([commandTool('echo_ok', ['printf', '%s', '{{text}}'], STRING_ARG('text'), { outputSchema, title: 'Echo (ok)' })]),
    );
    client = await mcpClientFor(t, tenant, projectId);
    url = `http://127.0.0.1:${t.port}/v1/projects/${projectId}/mcp`;
  });
  afterAll(async () => {
    await client?.close();
    await t.close();
  });

  const rows = async (tool: string) =>
    (await t.http.get(`/v1/projects/${projectId}/invocations`).query({ tool, limit: 100 }).set(tenant.auth).expect(200)).body
      .items as InvocationRow[];
  const HEADERS = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
  };
  const post = (message: unknown, auth: Record<string, string> = tenant.auth) =>
    fetch(url, { method: 'POST', headers: { ...HEADERS, ...auth }, body: JSON.stringify(message) });

  it('lists every tool with a title, and every built-in with the output schema its results are checked against', async () => {
    const { tools } = await client.listTools();
    for (const tool of tools) expect({ name: tool.name, title: typeof tool.title }).toEqual({ name: tool.name, title: 'string' });
    const builtins = tools.filter((tool) => tool.name !== 'echo_ok');
    for (const tool of builtins)
      expect({ name: tool.name, outputSchema: tool.outputSchema?.type }).toEqual({ name: tool.name, outputSchema: 'object' });
    expect(tools.find((tool) => tool.name === 'echo_ok')).toMatchObject({ title: 'Echo (ok)', outputSchema: { required: ['stdout'] } });
    expect(tools.find((tool) => tool.name === 'fetch_url')?.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
  });

  it('answers every built-in through the official client, which checks each result against the listed schema', async () => {
    // The client throws when structuredContent breaks the tool's outputSchema, error results included.
    const calls: Array<[string, Record<string, unknown>]> = [
      ['write_file', { path: 'dir/b.txt', content: 'gamma\n' }],
      ['read_file', { path: 'dir/a.txt' }],
      ['read_file', { path: 'dir/a.txt', encoding: 'base64' }],
      ['list_files', { path: 'dir' }],
      ['list_files', { recursive: true, details: true }],
      ['search_files', { pattern: 'alpha' }],
      ['edit_file', { path: 'dir/b.txt', edits: [{ oldText: 'gamma', newText: 'delta' }] }],
      ['read_multiple_files', { paths: ['dir/a.txt', 'missing.txt'] }],
      ['shell_exec', { argv: ['echo', 'hi'] }],
      ['move_file', { source: 'dir/b.txt', destination: 'dir/c.txt' }],
      ['delete_file', { path: 'dir/c.txt' }],
    ];
    for (const [name, args] of calls) {
      const result = (await client.callTool({ name, arguments: args })) as TextResult;
      expect({ name, isError: result.isError ?? false, text: result.isError ? textOf(result) : '' }).toEqual({
        name,
        isError: false,
        text: '',
      });
      expect(result.structuredContent).toEqual(JSON.parse(textOf(result)));
    }
    // Failures and refusals: isError, the detail in _meta, no structuredContent the schema does not describe.
    for (const args of [{ path: 'missing.txt' }, { path: '../outside.txt' }, { path: 5 }]) {
      const result = (await client.callTool({ name: 'read_file', arguments: args })) as TextResult;
      expect(result).toMatchObject({ isError: true, _meta: { 'dev.toolgate/error': { error: { code: expect.any(String) } } } });
      expect(result.structuredContent).toBeUndefined();
    }
  });

  it('withholds a result that breaks the tool’s own output schema: an error for every channel, audited', async () => {
    const kept = (await client.callTool({ name: 'echo_ok', arguments: { text: 'ok fine' } })) as TextResult;
    expect(kept.structuredContent).toMatchObject({ stdout: 'ok fine' });
    const broken = (await client.callTool({ name: 'echo_ok', arguments: { text: 'not ok' } })) as TextResult;
    expect(broken.isError).toBe(true);
    expect(broken.structuredContent).toBeUndefined();
    expect(textOf(broken)).toMatch(/does not match its declared output schema at \/stdout/);
    const rest = await t.http
      .post(`/v1/projects/${projectId}/tools/echo_ok/invoke`)
      .set(tenant.auth)
      .send({ arguments: { text: 'nope' } })
      .expect(200);
    expect(rest.body).toMatchObject({ status: 'error', error: { code: 'invalid_output' } });
    expect(rest.body.result).toBeUndefined();
    const audited = (await rows('echo_ok')).filter((r) => r.errorCode === 'invalid_output');
    expect(audited.map((r) => r.channel).sort()).toEqual(['mcp', 'rest']);
  });

  it('answers an unknown tool with the JSON-RPC error -32602, not a tool result, and audits the refusal', async () => {
    const error = await client.callTool({ name: 'no_such_tool', arguments: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringMatching(/no_such_tool/) });
    const raw = await post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'read_fil', arguments: {} } });
    const body = (await raw.json()) as { id: number; error: { code: number; message: string }; result?: unknown };
    expect(body).toMatchObject({ id: 7, error: { code: -32602, message: expect.stringMatching(/read_file/) } });
    expect(body.result).toBeUndefined();
    expect((await rows('no_such_tool')).map((r) => r.errorCode)).toContain('tool_not_found');
  });

  it('sends progress notifications while a call runs when the client asked, which keeps a short client timeout alive', async () => {
    const progress: number[] = [];
    const result = (await client.callTool({ name: 'shell_exec', arguments: { argv: ['sleep', '1'] } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
      // Shorter than the call: only the progress notifications let it finish.
      timeout: 600,
      resetTimeoutOnProgress: true,
    })) as TextResult;
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toMatchObject({ exitCode: 0 });
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  });

  it('[sec-91] notifications/cancelled from the official client stops the command at once and the call is audited cancelled', async () => {
    const marker = uniqueSleep(30);
    const controller = new AbortController();
    const pending = client
      .callTool({ name: 'shell_exec', arguments: { argv: ['sleep', marker] } }, undefined, { signal: controller.signal })
      .catch((e: unknown) => e);
    await waitForProcess(marker);
    const cancelledAt = Date.now();
    controller.abort('the user pressed stop');
    await pending;
    // The client leaves its POST open after cancelling: only the notification (a POST of its own) stops the call.
    await expectNoProcess(marker);
    expect(Date.now() - cancelledAt).toBeLessThan(5_000);
    const row = await eventually(
      async () => {
        const found = (await rows('shell_exec')).find((r) => r.errorCode === 'cancelled');
        expect(found).toBeDefined();
        return found!;
      },
      100,
      50,
    );
    expect(row).toMatchObject({ status: 'error', channel: 'mcp', errorMessage: expect.stringMatching(/client cancelled the call/) });
    expect(row.durationMs).toBeLessThan(10_000);
  });

  it('[sec-91] a notifications/cancelled inside a JSON-RPC batch stops the call it names, in the batch or on another POST, and the batch is answered', async () => {
    // Batches are part of revision 2025-03-26, not of the later ones.
    const postBatch = (messages: unknown[]) =>
      fetch(url, {
        method: 'POST',
        headers: { ...HEADERS, 'mcp-protocol-version': '2025-03-26', ...tenant.auth },
        body: JSON.stringify(messages),
      });
    const marker = uniqueSleep(30);
    const started = Date.now();
    const batch = await postBatch([
      { jsonrpc: '2.0', id: 'b-1', method: 'tools/call', params: { name: 'shell_exec', arguments: { argv: ['sleep', marker] } } },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'b-1', reason: 'in the same batch' } },
      { jsonrpc: '2.0', id: 'b-2', method: 'tools/list' },
    ]);
    expect(batch.status).toBe(200);
    const answers = (await batch.json()) as Array<{ id: string; result: TextResult & { tools?: unknown[] } }>;
    expect(answers.map((a) => a.id).sort()).toEqual(['b-1', 'b-2']);
    expect(answers.find((a) => a.id === 'b-1')!.result).toMatchObject({
      isError: true,
      _meta: { 'dev.toolgate/error': { error: { code: 'cancelled' } } },
    });
    expect(answers.find((a) => a.id === 'b-2')!.result.tools?.length).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    await expectNoProcess(marker);

    // A batch holding only the cancellation of a call another POST runs: 202, and that call stops.
    const marker2 = uniqueSleep(30);
    const running = post({
      jsonrpc: '2.0',
      id: 'b-3',
      method: 'tools/call',
      params: { name: 'shell_exec', arguments: { argv: ['sleep', marker2] } },
    });
    await waitForProcess(marker2);
    expect((await postBatch([{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'b-3' } }])).status).toBe(202);
    const stopped = (await (await running).json()) as { result: TextResult };
    expect(stopped.result).toMatchObject({ isError: true, _meta: { 'dev.toolgate/error': { error: { code: 'cancelled' } } } });
    await expectNoProcess(marker2);
  });

  it('[sec-91] a cancellation names a request of the same key only: another key’s notification stops nothing', async () => {
    const issued = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ name: 'other agent', role: 'agent', projectIds: [projectId] })
      .expect(201);
    const other = { Authorization: `Bearer ${issued.body.key as string}` };
    const marker = uniqueSleep(2);
    const running = post({
      jsonrpc: '2.0',
      id: 'long-1',
      method: 'tools/call',
      params: { name: 'shell_exec', arguments: { argv: ['sleep', marker] } },
    });
    await waitForProcess(marker);
    const foreign = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long-1' } }, other);
    expect(foreign.status).toBe(202);
    const answer = (await (await running).json()) as { result: TextResult };
    expect(answer.result.isError ?? false).toBe(false);
    // The same id, cancelled by the key that sent it, stops.
    const marker2 = uniqueSleep(30);
    const second = post({
      jsonrpc: '2.0',
      id: 'long-1',
      method: 'tools/call',
      params: { name: 'shell_exec', arguments: { argv: ['sleep', marker2] } },
    });
    await waitForProcess(marker2);
    expect(
      (await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long-1', reason: 'changed my mind' } }))
        .status,
    ).toBe(202);
    const stopped = (await (await second).json()) as { result: TextResult };
    expect(stopped.result).toMatchObject({ isError: true, _meta: { 'dev.toolgate/error': { error: { code: 'cancelled' } } } });
    expect(textOf(stopped.result)).toMatch(/changed my mind/);
    await expectNoProcess(marker2);
  });
});
