import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { eventually } from '../../support/eventually.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { BUILTIN_TOOL_NAMES } from '../../../src/execution/builtin-tool-names.js';
import { commandTool, enableSkill, installSkill, registerSkill, skillOf, STRING_ARG, uniqueName } from '../skills/skill-test-kit.js';
import { callTool, SHELL_PROJECT } from '../tools/tool-test-kit.js';
import { connectMcp, mcpClientFor, type TextResult, textOf } from './mcp-test-kit.js';

interface InvocationRow {
  id: string;
  tool: string;
  channel: string;
  status: string;
  errorCode: string | null;
  arguments: unknown;
}

describe('the MCP endpoint of a project', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let workspace: string;
  let client: Client;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    const project = await t.createProject(tenant, SHELL_PROJECT);
    projectId = project.id;
    workspace = t.workspaceOf(projectId);
    await installSkill(
      t,
      tenant,
      projectId,
      skillOf([
        commandTool('say', ['printf', '%s', '{{text}}'], STRING_ARG('text'), { annotations: { readOnly: true, destructive: false } }),
      ]),
    );
    client = await mcpClientFor(t, tenant, projectId);
  });
  afterAll(async () => {
    await client?.close();
    await t.close();
  });

  const audit = async (id: string) =>
    (await t.http.get(`/v1/projects/${projectId}/invocations/${id}`).set(tenant.auth).expect(200)).body as InvocationRow;
  const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<TextResult>;

  it('lists the same tools as GET .../tools?format=mcp: built-ins and the enabled skill, with schemas and annotations', async () => {
    const rest = (await t.http.get(`/v1/projects/${projectId}/tools`).query({ format: 'mcp' }).set(tenant.auth).expect(200)).body
      .tools as Array<{ name: string }>;
    const { tools } = await client.listTools();
    // Under revision 2025-11-25, which the SDK client speaks, each may also be called as a task.
    expect(tools).toEqual(rest.map((tool) => ({ ...tool, execution: { taskSupport: 'optional' } })));
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['read_file', 'write_file', 'shell_exec', 'say']));
    expect(tools.find((tool) => tool.name === 'say')?.annotations).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    });
    expect(client.getServerVersion()?.name).toBe('toolgate');
  });

  it('lists the tools in one order on every request: the built-ins, then skills by creation (not by when they were enabled), each in its own order', async () => {
    const ordered = (await t.createProject(tenant)).id;
    const echo = (name: string) => commandTool(name, ['printf', '%s', '{{text}}'], STRING_ARG('text'));
    const first = await registerSkill(t, tenant, skillOf([echo('zeta_tool'), echo('alpha_tool')], { name: uniqueName('first') }));
    const second = await registerSkill(t, tenant, skillOf([echo('beta_tool')], { name: uniqueName('second') }));
    const expected = [...BUILTIN_TOOL_NAMES, 'zeta_tool', 'alpha_tool', 'beta_tool'];
    const listings = async () => {
      const mcp = await connectMcp(t, ordered, tenant.auth);
      try {
        const rest = (await t.http.get(`/v1/projects/${ordered}/tools`).query({ format: 'mcp' }).set(tenant.auth).expect(200)).body
          .tools as Array<{ name: string }>;
        return [(await mcp.listTools()).tools, (await mcp.listTools()).tools, rest].map((tools) => tools.map((tool) => tool.name));
      } finally {
        await mcp.close();
      }
    };
    for (const skill of [second, first]) expect((await enableSkill(t, tenant, ordered, skill.id)).status).toBe(201);
    expect(await listings()).toEqual([expected, expected, expected]);
    // Enabled again, the first skill is now the last enabled: the order stays.
    await t.http.delete(`/v1/projects/${ordered}/skills/${first.id}`).set(tenant.auth).expect(204);
    expect((await enableSkill(t, tenant, ordered, first.id)).status).toBe(201);
    expect(await listings()).toEqual([expected, expected, expected]);
  });

  it('calls a tool through the same pipeline as REST: the JSON result as structuredContent and text, one audit row with channel mcp', async () => {
    await writeFile(path.join(workspace, 'notes.txt'), 'hello over MCP');
    const result = await call('read_file', { path: 'notes.txt' });
    const rest = (await callTool(t, tenant, projectId, 'read_file', { path: 'notes.txt' }).expect(200)).body as { result: unknown };
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(rest.result);
    expect(JSON.parse(textOf(result))).toEqual(rest.result);
    const row = await audit(result._meta?.['dev.toolgate/invocationId'] as string);
    expect(row).toMatchObject({ tool: 'read_file', channel: 'mcp', status: 'ok', arguments: { path: 'notes.txt' } });
  });

  it('calls an enabled skill tool', async () => {
    const result = await call('say', { text: 'from a skill' });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('from a skill');
  });

  it('answers invalid arguments with isError and the very message of the REST 422, audited as invalid_arguments', async () => {
    const rest = await callTool(t, tenant, projectId, 'read_file', { path: 42, extra: true }).expect(422);
    const result = await call('read_file', { path: 42, extra: true });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(rest.body.error.message);
    expect(textOf(result)).toMatch(/path.*Usage: read_file\(/s);
    const rows = (
      await t.http
        .get(`/v1/projects/${projectId}/invocations`)
        .query({ status: 'invalid_arguments', limit: 100 })
        .set(tenant.auth)
        .expect(200)
    ).body.items as InvocationRow[];
    expect(rows.map((r) => r.channel).sort()).toEqual(['mcp', 'rest']);
  });

  it('answers a tool that ran and failed with isError and its error, with no structuredContent outside its output schema', async () => {
    const result = await call('read_file', { path: 'missing.txt' });
    expect(result.isError).toBe(true);
    // read_file declares an output schema: its error's detail is in _meta, structuredContent is only ever a result.
    expect(result.structuredContent).toBeUndefined();
    expect(result._meta?.['dev.toolgate/error']).toMatchObject({ status: 'error', error: { code: 'not_found' } });
    expect(textOf(result)).toMatch(/missing\.txt/);
  });

  it('cancels a running call when the client goes away, and audits it as cancelled', async () => {
    const leaving = await mcpClientFor(t, tenant, projectId);
    const pending = leaving.callTool({ name: 'shell_exec', arguments: { argv: ['sleep', '30'] } }).catch((error: unknown) => error);
    // Long enough for the command to be running; the row only lands once the call ends.
    await new Promise((resolve) => setTimeout(resolve, 700));
    await leaving.close();
    await pending;
    const row = await eventually(
      async () => {
        const rows = (await t.http.get(`/v1/projects/${projectId}/invocations`).query({ tool: 'shell_exec', limit: 100 }).set(tenant.auth))
          .body.items as InvocationRow[];
        const cancelled = rows.find((r) => r.channel === 'mcp');
        expect(cancelled).toBeDefined();
        return cancelled;
      },
      100,
      100,
    );
    expect(row).toMatchObject({ status: 'error', errorCode: 'cancelled' });
  });

  it('refuses a missing key with 401 and another tenant with 404, in the service’s error shape', async () => {
    const port = t.port;
    const url = `http://127.0.0.1:${port}/v1/projects/${projectId}/mcp`;
    await expect(connectMcp(t, projectId, {})).rejects.toThrow(/"code":"unauthorized"/);
    const other = await t.createTenant();
    await expect(mcpClientFor(t, other, projectId)).rejects.toThrow(/"code":"project_not_found"/);
    const missing = await fetch(url, {
      method: 'POST',
      headers: { ...other.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    });
    const body = (await missing.json()) as { error: { code: string } };
    const rest = await t.http.get(`/v1/projects/${projectId}/tools`).set(other.auth);
    expect({ status: missing.status, code: body.error.code }).toEqual({ status: 404, code: rest.body.error.code });
  });

  it('answers GET and DELETE with 405 (stateless: no stream, no session)', async () => {
    const get = await t.http.get(`/v1/projects/${projectId}/mcp`).set(tenant.auth).expect(405);
    expect(get.headers.allow).toBe('POST');
    expect(get.body.error.code).toBe('method_not_allowed');
    await t.http.delete(`/v1/projects/${projectId}/mcp`).set(tenant.auth).expect(405);
  });
});
