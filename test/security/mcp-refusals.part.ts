import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { connectMcp, mcpClientFor, type TextResult, textOf } from '../e2e/mcp/mcp-test-kit.js';
import { callTool } from '../e2e/tools/tool-test-kit.js';

// [sec-56] Over MCP, every refusal of the REST routes holds the same.
describe('MCP endpoint refusals', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { BODY_LIMIT_BYTES: '65536' } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
  });
  afterAll(() => t.close());

  const post = async (headers: Record<string, string>, body: string, project = projectId) => {
    const port = t.port;
    const res = await fetch(`http://127.0.0.1:${port}/v1/projects/${project}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body,
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as { error?: { code: string }; requestId?: string } };
  };
  const listTools = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

  it('[sec-56] refuses a missing, a wrong and a revoked-looking key with 401, like the REST routes', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { Authorization: 'Bearer tg_wrong_0000000000000000000000000000' },
      { Authorization: 'Basic abc' },
    ]) {
      const mcp = await post(headers, listTools);
      const rest = await t.http.get(`/v1/projects/${projectId}/tools`).set(headers);
      expect({ status: mcp.status, code: mcp.body.error?.code }).toEqual({ status: 401, code: rest.body.error.code });
    }
  });

  it("[sec-56] answers another tenant's project exactly like a missing one", async () => {
    const other = await t.createTenant();
    const foreign = await post(other.auth, listTools);
    const missing = await post(other.auth, listTools, '00000000-0000-4000-8000-000000000000');
    expect(foreign.status).toBe(404);
    expect({ ...foreign.body, requestId: null }).toEqual({
      ...missing.body,
      requestId: null,
      error: { ...missing.body.error, message: expect.any(String) },
    });
    expect(foreign.body.error).toEqual({ code: 'project_not_found', message: expect.stringContaining(projectId) });
  });

  it('[sec-56] refuses invalid arguments and a path outside the workspace with the REST messages, before anything runs', async () => {
    const client = await mcpClientFor(t, tenant, projectId);
    try {
      for (const args of [
        { path: '../../etc/passwd' },
        { path: '/etc/passwd' },
        { path: 'a.txt', __proto__x: 1 },
        { path: 'a.txt', ['__proto__']: { polluted: true } },
      ]) {
        const rest = await callTool(t, tenant, projectId, 'read_file', args);
        expect(rest.status).toBeGreaterThanOrEqual(400);
        if (rest.body.error.code === 'invalid_json') {
          // Fastify's JSON parser refuses a body with a __proto__ key (400 invalid_json) before any route
          // runs: the MCP request is refused at the HTTP level the same way, and the tool never runs.
          await expect(client.callTool({ name: 'read_file', arguments: args })).rejects.toThrow(/400|invalid_json/);
          continue;
        }
        const result = (await client.callTool({ name: 'read_file', arguments: args })) as TextResult;
        expect({ isError: result.isError, text: textOf(result) }).toEqual({ isError: true, text: rest.body.error.message });
        expect(result._meta?.['dev.toolgate/error']).toMatchObject({ error: { code: rest.body.error.code } });
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it('[sec-56] refuses a body over the limit with 413 in the service’s shape, with the request id', async () => {
    const huge = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'write_file', arguments: { path: 'x', content: 'x'.repeat(100_000) } },
    });
    const res = await post(tenant.auth, huge);
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 413, code: 'payload_too_large' });
    expect(res.headers.get('x-request-id')).toBe(res.body.requestId);
  });

  it('keeps the request id header on MCP answers', async () => {
    const res = await post(
      { ...tenant.auth, 'x-request-id': 'mcp-request-0001' },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('mcp-request-0001');
    await expect(connectMcp(t, projectId, tenant.auth).then((c) => c.close())).resolves.toBeUndefined();
  });
});
