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

  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'modern-client', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const post = async (message: unknown, headers: Record<string, string | undefined>): Promise<Answer> => {
    const sent: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      ...tenant.auth,
    };
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) delete sent[name];
      else sent[name] = value;
    }
    const res = await fetch(url, { method: 'POST', headers: sent, body: JSON.stringify(message) });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
  };
  const call = (id: number, name: string, args: object) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args, _meta: meta },
  });
  const audited = async () =>
    (await t.http.get(`/v1/projects/${projectId}/invocations`).query({ limit: 100 }).set(tenant.auth).expect(200)).body.items
      .length as number;

  it('answers server/discover without initialize: the revisions it speaks, its capabilities (resources where the key may read files) and identity, cacheable by the caller only', async () => {
    const res = await post(
      { jsonrpc: '2.0', id: 'd1', method: 'server/discover', params: { _meta: meta } },
      { 'mcp-method': 'server/discover' },
    );
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
    expect(Object.keys(res.body.result).sort()).toEqual([
      '_meta',
      'cacheScope',
      'capabilities',
      'resultType',
      'supportedVersions',
      'ttlMs',
    ]);
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
    const res = await post(call(2, 'write_file', { path: 'modern.txt', content: 'hi' }), {
      'mcp-method': 'tools/call',
      'mcp-name': 'write_file',
    });
    expect(res.body.result).toMatchObject({ resultType: 'complete', structuredContent: { path: 'modern.txt', created: true } });
    expect(await audited()).toBe(before + 1);
    // A name sent base64-encoded (as clients send names that are not plain ASCII) is decoded before it is compared.
    const encoded = await post(call(3, 'read_file', { path: 'modern.txt' }), {
      'mcp-method': 'tools/call',
      'mcp-name': `=?base64?${Buffer.from('read_file').toString('base64')}?=`,
    });
    expect(encoded.body.result).toMatchObject({ structuredContent: { content: 'hi' } });
    const unknown = await post(
      { jsonrpc: '2.0', id: 4, method: 'prompts/list', params: { _meta: meta } },
      { 'mcp-method': 'prompts/list' },
    );
    expect(unknown).toMatchObject({ status: 404, body: { id: 4, error: { code: -32601 } } });
  });

  it('[sec-92] refuses a request whose Mcp-Method or Mcp-Name disagrees with its body, with -32020 and HTTP 400, before anything runs', async () => {
    const before = await audited();
    const write = (id: number, file: string) => call(id, 'write_file', { path: file, content: 'should never be written' });
    const cases: Array<[string, unknown, Record<string, string | undefined>]> = [
      [
        'a read-only method in the header, a write in the body',
        write(10, 'm1.txt'),
        { 'mcp-method': 'tools/list', 'mcp-name': 'write_file' },
      ],
      ['another tool in Mcp-Name', write(11, 'm2.txt'), { 'mcp-method': 'tools/call', 'mcp-name': 'read_file' }],
      ['no Mcp-Method', write(12, 'm3.txt'), { 'mcp-name': 'write_file' }],
      ['no Mcp-Name for a tools/call', write(13, 'm4.txt'), { 'mcp-method': 'tools/call' }],
      [
        'an encoded Mcp-Name of another tool',
        write(14, 'm5.txt'),
        { 'mcp-method': 'tools/call', 'mcp-name': `=?base64?${Buffer.from('read_file').toString('base64')}?=` },
      ],
      [
        'Mcp-Name on a method that names nothing',
        { jsonrpc: '2.0', id: 15, method: 'tools/list', params: {} },
        { 'mcp-method': 'tools/list', 'mcp-name': 'write_file' },
      ],
      [
        'a body naming another revision than the header',
        {
          ...write(16, 'm6.txt'),
          params: {
            name: 'write_file',
            arguments: { path: 'm6.txt', content: 'x' },
            _meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' },
          },
        },
        { 'mcp-method': 'tools/call', 'mcp-name': 'write_file' },
      ],
    ];
    for (const [why, message, headers] of cases) {
      const res = await post(message, headers);
      expect({ why, status: res.status, code: res.body?.error?.code }).toEqual({ why, status: 400, code: -32020 });
      expect(res.body.result).toBeUndefined();
    }
    for (const file of ['m1.txt', 'm2.txt', 'm3.txt', 'm4.txt', 'm5.txt', 'm6.txt'])
      expect({ file, exists: existsSync(path.join(t.workspaceOf(projectId), file)) }).toEqual({ file, exists: false });
    expect(await audited()).toBe(before);
  });

  it('answers a revision it does not speak with -32022 and the ones it does, and refuses a batch', async () => {
    const later = await post(
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} },
      { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'server/discover' },
    );
    expect(later.status).toBe(400);
    expect(later.body.error).toMatchObject({
      code: -32022,
      data: { supported: expect.arrayContaining([MODERN, '2025-11-25']), requested: '2099-01-01' },
    });
    const batch = await post([{ jsonrpc: '2.0', id: 1, method: 'ping' }], { 'mcp-method': 'ping' });
    expect(batch.status).toBe(400);
    expect(batch.body.error.code).toBe(-32600);
  });

  it('refuses a request without the _meta envelope (its revision, the client’s capabilities) with -32602 and HTTP 400, naming its id; serves one without clientInfo', async () => {
    const { 'io.modelcontextprotocol/protocolVersion': _version, ...noVersion } = meta;
    const { 'io.modelcontextprotocol/clientCapabilities': _capabilities, ...noCapabilities } = meta;
    const before = await audited();
    const cases: Array<[string, Record<string, unknown>]> = [
      ['no _meta', { name: 'write_file', arguments: { path: 'e1.txt', content: 'x' } }],
      ['no protocol version in _meta', { name: 'write_file', arguments: { path: 'e2.txt', content: 'x' }, _meta: noVersion }],
      ['no client capabilities in _meta', { name: 'write_file', arguments: { path: 'e3.txt', content: 'x' }, _meta: noCapabilities }],
      [
        'capabilities that are not an object',
        {
          name: 'write_file',
          arguments: { path: 'e4.txt', content: 'x' },
          _meta: { ...meta, 'io.modelcontextprotocol/clientCapabilities': ['sampling'] },
        },
      ],
    ];
    for (const [why, params] of cases) {
      const res = await post(
        { jsonrpc: '2.0', id: `env-${why}`, method: 'tools/call', params },
        { 'mcp-method': 'tools/call', 'mcp-name': 'write_file' },
      );
      expect({ why, status: res.status, id: res.body.id, code: res.body.error?.code }).toEqual({
        why,
        status: 400,
        id: `env-${why}`,
        code: -32602,
      });
    }
    for (const file of ['e1.txt', 'e2.txt', 'e3.txt', 'e4.txt'])
      expect({ file, exists: existsSync(path.join(t.workspaceOf(projectId), file)) }).toEqual({ file, exists: false });
    expect(await audited()).toBe(before);
    const { 'io.modelcontextprotocol/clientInfo': _info, ...noClientInfo } = meta;
    const served = await post(
      { jsonrpc: '2.0', id: 105, method: 'server/discover', params: { _meta: noClientInfo } },
      { 'mcp-method': 'server/discover' },
    );
    expect({ status: served.status, error: served.body.error }).toEqual({ status: 200, error: undefined });
  });

  it('answers the methods the revision removed and unknown ones with 404 and -32601, naming the request’s id', async () => {
    for (const [id, method] of [
      [501, 'initialize'],
      [502, 'ping'],
      [503, 'logging/setLevel'],
      [504, 'resources/subscribe'],
      [505, 'resources/unsubscribe'],
      [506, 'notifications/initialized'],
      [507, 'unknown/method'],
    ] as const) {
      const res = await post({ jsonrpc: '2.0', id, method, params: { _meta: meta } }, { 'mcp-method': method });
      expect({ method, status: res.status, id: res.body.id, code: res.body.error?.code }).toEqual({
        method,
        status: 404,
        id,
        code: -32601,
      });
    }
    // A notification is accepted, whatever its method: there is nothing to answer.
    expect(
      (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-method': 'notifications/initialized' })).status,
    ).toBe(202);
  });

  it('answers an unsupported revision with -32022 and HTTP 400, the revisions it supports (those server/discover lists) and the one asked for, naming the id', async () => {
    const discovered = await post(
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } },
      { 'mcp-method': 'server/discover' },
    );
    const unsupported = { ...meta, 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' };
    const res = await post(
      { jsonrpc: '2.0', id: 301, method: 'server/discover', params: { _meta: unsupported } },
      { 'mcp-protocol-version': 'v999.0.0', 'mcp-method': 'server/discover' },
    );
    expect({ status: res.status, id: res.body.id, code: res.body.error.code, requested: res.body.error.data.requested }).toEqual({
      status: 400,
      id: 301,
      code: -32022,
      requested: 'v999.0.0',
    });
    expect(res.body.error.data.supported).toEqual(discovered.body.result.supportedVersions);
    expect(res.body.error.message).toContain('2026-07-28');
    // The header naming this revision while _meta names another: -32020, with the id.
    const mismatch = await post(
      { jsonrpc: '2.0', id: 302, method: 'server/discover', params: { _meta: unsupported } },
      { 'mcp-method': 'server/discover' },
    );
    expect({ status: mismatch.status, id: mismatch.body.id, code: mismatch.body.error.code }).toEqual({
      status: 400,
      id: 302,
      code: -32020,
    });
  });

  it('refuses the tasks methods to a client that does not declare the extension with -32021 and HTTP 400', async () => {
    const res = await post(
      { jsonrpc: '2.0', id: 401, method: 'tasks/get', params: { taskId: 'nope', _meta: meta } },
      { 'mcp-method': 'tasks/get', 'mcp-name': 'nope' },
    );
    expect({ status: res.status, id: res.body.id, code: res.body.error.code }).toEqual({ status: 400, id: 401, code: -32021 });
  });
});
