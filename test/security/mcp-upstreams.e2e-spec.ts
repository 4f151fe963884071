import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { callTool, enableSkill, expectError, postSkill, uniqueName } from '../e2e/skills/skill-test-kit.js';
import { mcpClientFor, type TextResult } from '../e2e/mcp/mcp-test-kit.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { UPSTREAM_TOOLS, UpstreamMcpServer } from '../e2e/mcp/upstream-mcp-server.js';
import { AppWorkerPool } from '../../src/app-worker-pool.module.js';

// A tenant's MCP server imported as a skill, run once (not per adapter where it matters little): the
// upstream is a real SDK server on loopback, opened with FETCH_ALLOW_HOSTS.
describe('MCP servers as skill sources', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  const upstream = new UpstreamMcpServer();

  const source = (tools?: string[], extra: Record<string, unknown> = {}) => ({
    name: uniqueName('upstream'),
    version: '1.0.0',
    description: 'Tools of an MCP server',
    source: { type: 'mcp', url: upstream.url, headers: { Authorization: 'Bearer upstream-secret' }, ...(tools ? { tools } : {}) },
    ...extra,
  });

  beforeAll(async () => {
    await upstream.start();
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}` } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    const imported = await postSkill(t, tenant, source(['echo', 'fail', 'hang', 'flood', 'crowd']));
    expect(imported.status).toBe(201);
    expect((await enableSkill(t, tenant, projectId, imported.body.id as string)).status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
    await upstream.stop();
  });

  it('imports the upstream tools with their schemas, serves its hints only when trusted, and keeps the headers encrypted (masked)', async () => {
    const tools = (await t.http.get(`/v1/projects/${projectId}/tools`).set(tenant.auth).expect(200)).body.tools as Array<
      Record<string, unknown>
    >;
    const echo = tools.find((tool) => tool.name === 'echo');
    // The server says readOnlyHint: true, destructiveHint: false; untrusted, Toolgate serves what it derives.
    expect(echo).toMatchObject({
      description: 'Echoes its text',
      inputSchema: { type: 'object', required: ['text'] },
      outputSchema: { type: 'object' },
      annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true },
    });
    const trusted = await postSkill(t, tenant, { ...source(['echo']), source: { ...source(['echo']).source, trustAnnotations: true } });
    expect(trusted.status).toBe(201);
    expect((trusted.body.tools as Array<{ annotations: unknown }>)[0].annotations).toMatchObject({
      readOnly: true,
      destructive: false,
      openWorld: true,
    });
    const skills = (await t.http.get('/v1/skills').set(tenant.auth).expect(200)).body.items as Array<{
      tools: Array<{ executor: { headers?: Record<string, string> } }>;
    }>;
    expect(JSON.stringify(skills)).not.toContain('upstream-secret');
  });

  it('refuses a schema that fails vetting, naming the tool and why', async () => {
    const res = await postSkill(t, tenant, source());
    const error = expectError(res, 422, 'schema_refused');
    expect(error.message).toMatch(/remote_ref/);
    expect(error.message).toMatch(/\$ref/);
  });

  it('imports a tool whose input schema uses JSON Schema 2020-12 keywords ($anchor and others) and validates calls by it', async () => {
    const anchored: Tool = {
      name: 'order',
      description: 'Orders an item',
      inputSchema: {
        type: 'object',
        $defs: { sku: { $anchor: 'sku', type: 'string', pattern: '^[A-Z]{3}-\\d+$' } },
        properties: {
          sku: { $ref: '#sku' },
          size: { type: 'array', prefixItems: [{ type: 'integer' }, { type: 'integer' }] },
          gift: { type: 'boolean' },
          note: { type: 'string' },
        },
        required: ['sku'],
        dependentRequired: { gift: ['note'] },
        unevaluatedProperties: false,
      },
    };
    upstream.tools = [...UPSTREAM_TOOLS, anchored];
    try {
      const imported = await postSkill(t, tenant, source(['order']));
      expect(imported.status).toBe(201);
      const project = (await t.createProject(tenant)).id;
      expect((await enableSkill(t, tenant, project, imported.body.id as string)).status).toBe(201);
      const before = upstream.calls.length;
      for (const refused of [{ sku: 'abc' }, { sku: 'ABC-1', gift: true }, { sku: 'ABC-1', colour: 'red' }])
        expectError(await callTool(t, tenant, project, 'order', refused), 422, 'invalid_arguments');
      expect(upstream.calls.length).toBe(before);
      await callTool(t, tenant, project, 'order', { sku: 'ABC-1', size: [2, 3], gift: true, note: 'for you' }).expect(200);
      expect(upstream.calls.slice(before)).toEqual(['order']);
    } finally {
      upstream.tools = UPSTREAM_TOOLS;
    }
  });

  it('forwards a valid call through REST and MCP; an invalid one never reaches the upstream', async () => {
    const before = upstream.calls.length;
    const bad = await callTool(t, tenant, projectId, 'echo', { text: 5 });
    expectError(bad, 422, 'invalid_arguments');
    expect(upstream.calls.length).toBe(before);
    const rest = await callTool(t, tenant, projectId, 'echo', { text: 'over REST' }).expect(200);
    expect(rest.body).toMatchObject({ status: 'ok', result: { echo: 'over REST' } });
    const client = await mcpClientFor(t, tenant, projectId);
    try {
      const result = (await client.callTool({ name: 'echo', arguments: { text: 'over MCP' } })) as TextResult;
      expect(result.structuredContent).toEqual({ echo: 'over MCP' });
    } finally {
      await client.close();
    }
  });

  it("turns an upstream isError into status error with the upstream's text", async () => {
    const res = await callTool(t, tenant, projectId, 'fail', {}).expect(200);
    expect(res.body).toMatchObject({ status: 'error', error: { code: 'upstream_error', message: 'upstream says no', retryable: false } });
  });

  it('[sec-58] bounds an upstream that hangs by the call timeout, and one that answers 10 MiB by the size cap', async () => {
    const hung = await callTool(t, tenant, projectId, 'hang', {}, { timeoutMs: 500 }).expect(200);
    expect(hung.body).toMatchObject({ status: 'timeout', error: { retryable: true } });
    const flood = await callTool(t, tenant, projectId, 'flood', {}).expect(200);
    expect(flood.body).toMatchObject({ status: 'error', error: { code: 'upstream_too_large' } });
    // The service lives on.
    await callTool(t, tenant, projectId, 'echo', { text: 'still here' }).expect(200);
  });

  it('relays at most MCP_RESULT_MAX_CONTENT_ITEMS content items, parsing a large answer on a pool thread', async () => {
    const pool = t.app.get(AppWorkerPool);
    const before = pool.completed;
    // 100,000 items are about 3 MB of JSON: parsed and cut on a thread, not on the event loop.
    const crowd = await callTool(t, tenant, projectId, 'crowd', { count: 100_000 }).expect(200);
    expect(crowd.body.status).toBe('ok');
    const content = (crowd.body.result as { content: { type: string; text: string }[] }).content;
    expect(content).toHaveLength(1000);
    expect(content.slice(0, 3).map((item) => item.text)).toEqual(['0', '1', '2']);
    expect(content[999].text).toBe(
      '[99001 more content items were dropped: Toolgate relays at most 1000 per result (MCP_RESULT_MAX_CONTENT_ITEMS)]',
    );
    expect(pool.completed).toBeGreaterThan(before);
    // A small answer is relayed whole.
    const few = await callTool(t, tenant, projectId, 'crowd', { count: 3 }).expect(200);
    expect(few.body.result).toEqual({ content: ['0', '1', '2'].map((text) => ({ type: 'text', text })) });
  });

  it('initialises a new session once when the upstream restarted, instead of failing', async () => {
    await callTool(t, tenant, projectId, 'echo', { text: 'before' }).expect(200);
    await upstream.restart();
    const after = await callTool(t, tenant, projectId, 'echo', { text: 'after' }).expect(200);
    expect(after.body).toMatchObject({ status: 'ok', result: { echo: 'after' } });
  });

  it('makes an unreachable upstream a retryable error', async () => {
    await upstream.stop();
    try {
      const res = await callTool(t, tenant, projectId, 'echo', { text: 'nobody there' }).expect(200);
      expect(res.body).toMatchObject({ status: 'error', error: { code: expect.stringMatching(/^upstream_|network/), retryable: true } });
    } finally {
      await upstream.start(upstream.port);
    }
  });

  it('[sec-57] refuses an upstream at a loopback address not opened by FETCH_ALLOW_HOSTS, at registration and at call time', async () => {
    const closed = await createTestApp({ database: t.database });
    try {
      const other = await closed.createTenant();
      const res = await postSkill(closed, other, source(['echo']));
      expectError(res, 403, 'url_blocked');
      // The skill registered while the address was open is refused on the instance where it is not.
      const call = await callTool(closed, tenant, projectId, 'echo', { text: 'x' });
      expectError(call, 403, 'url_blocked');
    } finally {
      await closed.close();
    }
  });
});
