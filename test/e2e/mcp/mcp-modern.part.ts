import { existsSync } from 'node:fs';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';

interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON-RPC answers, read field by field
  body: any;
}

const MODERN = '2026-07-28';

// Protocol revision 2026-07-28 as a client of that revision speaks it: no initialize, the revision in the
// MCP-Protocol-Version header (and _meta) of every POST, and the standard headers Mcp-Method and Mcp-Name
// mirroring the body, which a gateway must check against the body before it runs anything.
describe('MCP protocol revision 2026-07-28', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let url: string;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    url = `http://127.0.0.1:${t.port}/v1/projects/${projectId}/mcp`;
  });
  afterAll(() => t.close());

  const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'modern-client', version: '1' } };
  const post = async (message: unknown, headers: Record<string, string | undefined>): Promise<Answer> => {
    const sent: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, ...tenant.auth };
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) delete sent[name];
      else sent[name] = value;
    }
    const res = await fetch(url, { method: 'POST', headers: sent, body: JSON.stringify(message) });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
  };
  const call = (id: number, name: string, args: object) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: meta } });
  const audited = async () => (await t.http.get(`/v1/projects/${projectId}/invocations`).query({ limit: 100 }).set(tenant.auth).expect(200)).body.items.length as number;

  it('answers server/discover without initialize: the revisions it speaks, its capabilities (resources where the key may read files) and identity, cacheable by the caller only', async () => {
    const res = await post({ jsonrpc: '2.0', id: 'd1', method: 'server/discover', params: { _meta: meta } }, { 'mcp-method': 'server/discover' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      jsonrpc: '2.0',
      id: 'd1',
      result: {
        resultType: 'complete',
        capabilities: { tools: {}, resources: { subscribe: false }, completions: {} },
        ttlMs: expect.any(Number),
        cacheScope: 'private',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'toolgate', version: expect.any(String) } },
      },
    });
    expect(res.body.result.supportedVersions).toEqual(expect.arrayContaining([MODERN, '2025-11-25', '2025-03-26']));
    // The revision's final DiscoverResult, and nothing else: the identity lives in _meta, not beside it.
    expect(Object.keys(res.body.result).sort()).toEqual(['_meta', 'cacheScope', 'capabilities', 'resultType', 'supportedVersions', 'ttlMs']);
  });

  it("shows Toolgate's name to the Vercel AI SDK's MCP client on its default path (server/discover), and serves it the tools", async () => {
    const { createMCPClient } = await import('@ai-sdk/mcp');
    const client = await createMCPClient({ transport: { type: 'http', url, headers: tenant.auth } });
    try {
      expect(client.initializeResult.protocolVersion).toBe(MODERN);
      expect(client.serverInfo).toMatchObject({ name: 'toolgate' });
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name)).toContain('read_file');
    } finally {
      await client.close();
    }
  });

  it('lists the tools with cache hints private to the caller, and calls one: results marked complete, audited as MCP', async () => {
    const list = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } }, { 'mcp-method': 'tools/list' });
    expect(list.body.result).toMatchObject({ resultType: 'complete', cacheScope: 'private', ttlMs: expect.any(Number) });
    expect(list.body.result.tools.map((tool: { name: string }) => tool.name)).toContain('write_file');
    const before = await audited();
    const res = await post(call(2, 'write_file', { path: 'modern.txt', content: 'hi' }), { 'mcp-method': 'tools/call', 'mcp-name': 'write_file' });
    expect(res.body.result).toMatchObject({ resultType: 'complete', structuredContent: { path: 'modern.txt', created: true } });
    expect(await audited()).toBe(before + 1);
    // A name sent base64-encoded (as clients send names that are not plain ASCII) is decoded before it is compared.
    const encoded = await post(call(3, 'read_file', { path: 'modern.txt' }), { 'mcp-method': 'tools/call', 'mcp-name': `=?base64?${Buffer.from('read_file').toString('base64')}?=` });
    expect(encoded.body.result).toMatchObject({ structuredContent: { content: 'hi' } });
    const unknown = await post({ jsonrpc: '2.0', id: 4, method: 'prompts/list', params: { _meta: meta } }, { 'mcp-method': 'prompts/list' });
    expect(unknown.body).toMatchObject({ id: 4, error: { code: -32601 } });
  });

  it('[sec-92] refuses a request whose Mcp-Method or Mcp-Name disagrees with its body, with -32020 and HTTP 400, before anything runs', async () => {
    const before = await audited();
    const write = (id: number, file: string) => call(id, 'write_file', { path: file, content: 'should never be written' });
    const cases: Array<[string, unknown, Record<string, string | undefined>]> = [
      ['a read-only method in the header, a write in the body', write(10, 'm1.txt'), { 'mcp-method': 'tools/list', 'mcp-name': 'write_file' }],
      ['another tool in Mcp-Name', write(11, 'm2.txt'), { 'mcp-method': 'tools/call', 'mcp-name': 'read_file' }],
      ['no Mcp-Method', write(12, 'm3.txt'), { 'mcp-name': 'write_file' }],
      ['no Mcp-Name for a tools/call', write(13, 'm4.txt'), { 'mcp-method': 'tools/call' }],
      ['an encoded Mcp-Name of another tool', write(14, 'm5.txt'), { 'mcp-method': 'tools/call', 'mcp-name': `=?base64?${Buffer.from('read_file').toString('base64')}?=` }],
      ['Mcp-Name on a method that names nothing', { jsonrpc: '2.0', id: 15, method: 'tools/list', params: {} }, { 'mcp-method': 'tools/list', 'mcp-name': 'write_file' }],
      [
        'a body naming another revision than the header',
        { ...write(16, 'm6.txt'), params: { name: 'write_file', arguments: { path: 'm6.txt', content: 'x' }, _meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } } },
        { 'mcp-method': 'tools/call', 'mcp-name': 'write_file' },
      ],
    ];
    for (const [why, message, headers] of cases) {
      const res = await post(message, headers);
      expect({ why, status: res.status, code: res.body?.error?.code }).toEqual({ why, status: 400, code: -32020 });
      expect(res.body.result).toBeUndefined();
    }
    for (const file of ['m1.txt', 'm2.txt', 'm3.txt', 'm4.txt', 'm5.txt', 'm6.txt']) expect({ file, exists: existsSync(path.join(t.workspaceOf(projectId), file)) }).toEqual({ file, exists: false });
    expect(await audited()).toBe(before);
  });

  it('answers a revision it does not speak with -32022 and the ones it does, and refuses a batch', async () => {
    const later = await post({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} }, { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'server/discover' });
    expect(later.status).toBe(400);
    expect(later.body.error).toMatchObject({ code: -32022, data: { supported: expect.arrayContaining([MODERN, '2025-11-25']), requested: '2099-01-01' } });
    const batch = await post([{ jsonrpc: '2.0', id: 1, method: 'ping' }], { 'mcp-method': 'ping' });
    expect(batch.status).toBe(400);
    expect(batch.body.error.code).toBe(-32600);
  });
});
