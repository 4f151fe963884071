import { jest } from '@jest/globals';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { McpSdkFallback } from '../../../src/mcp/mcp-sdk-fallback.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';

interface Answer {
  status: number;
  contentType: string | null;
  text: string;
  // The parsed JSON body, when there is one.
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

// The endpoint answers the single messages SDK clients send on its own path and everything else through
// the SDK's transport and Server (src/mcp/mcp-fast-path.ts). Both must follow the protocol: these are the
// JSON-RPC and Streamable HTTP rules, sent as raw POSTs, with the same message answered both ways where a
// batch of one sends it through the SDK.
describe('the MCP endpoint speaks the protocol on both of its paths', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let url: string;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    const workspace = t.workspaceOf(projectId);
    await writeFile(path.join(workspace, 'a.txt'), 'one\ntwo\n');
    url = `http://127.0.0.1:${t.port}/v1/projects/${projectId}/mcp`;
  });
  afterAll(() => t.close());

  // Which path answered: the SDK's builds a Server for the message, the direct path never does.
  let sdkServers: ReturnType<typeof jest.spyOn>;
  beforeEach(() => {
    sdkServers = jest.spyOn(McpSdkFallback.prototype as unknown as { serverFor: () => unknown }, 'serverFor');
  });
  afterEach(() => sdkServers.mockRestore());
  const sdkAnswered = () => {
    const n = sdkServers.mock.calls.length;
    sdkServers.mockClear();
    return n;
  };

  const HEADERS = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
  };
  const post = async (message: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...HEADERS, ...tenant.auth, ...headers },
      body: typeof message === 'string' ? message : JSON.stringify(message),
    });
    const text = await res.text();
    return { status: res.status, contentType: res.headers.get('content-type'), text, body: text === '' ? undefined : JSON.parse(text) };
  };
  const request = (id: unknown, method: string, params?: unknown) => ({
    jsonrpc: '2.0',
    id,
    method,
    ...(params === undefined ? {} : { params }),
  });
  const withoutInvocationId = (result: { _meta?: unknown }) => ({ ...result, _meta: undefined });
  // JSON-RPC batches exist only up to revision 2025-03-26 (2025-06-18 removed them).
  const BATCH_REVISION = { 'mcp-protocol-version': '2025-03-26' };
  // A batch of one is the SDK transport's to answer; it answers one response as a single object.
  const throughSdk = (message: unknown) => post([message], BATCH_REVISION);
  // What the SDK answers to a request its schemas refuse: an error (its code is the SDK's: -32602 or
  // -32603), never a result.
  const refusedBySdk = (id: unknown) => ({ jsonrpc: '2.0', id, error: { code: expect.any(Number), message: expect.any(String) } });

  it('negotiates the protocol revision on initialize as the SDK does: the client’s when supported, else the latest', async () => {
    const params = (protocolVersion: string) => ({ protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
    const supported = await post(request(1, 'initialize', params('2025-03-26')), { 'mcp-protocol-version': '' });
    expect(sdkAnswered()).toBe(0);
    expect(supported.status).toBe(200);
    expect(supported.contentType).toMatch(/^application\/json/);
    expect(supported.body).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: {
        protocolVersion: '2025-03-26',
        capabilities: { tools: { listChanged: false }, resources: { subscribe: false, listChanged: false }, completions: {} },
        serverInfo: { name: 'toolgate', version: '1' },
      },
    });
    const unknown = await post(request('init-2', 'initialize', params('1999-01-01')));
    expect(unknown.body).toMatchObject({ id: 'init-2', result: { protocolVersion: LATEST_PROTOCOL_VERSION } });
    expect(sdkAnswered()).toBe(0);
    expect(supported.body).toEqual((await throughSdk(request(1, 'initialize', params('2025-03-26')))).body);
    expect(sdkAnswered()).toBe(1);
    // An initialize the SDK's schema refuses (no clientInfo) is its error, not a result.
    const invalid = await post(request(3, 'initialize', { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {} }));
    expect(invalid.body).toEqual(refusedBySdk(3));
  });

  it('answers ping with an empty result and a notification with 202 and no body', async () => {
    expect((await post(request('p', 'ping'))).body).toEqual({ jsonrpc: '2.0', id: 'p', result: {} });
    const notification = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect({ status: notification.status, text: notification.text }).toEqual({ status: 202, text: '' });
    expect(sdkAnswered()).toBe(0);
  });

  it('answers a tools/call the same on its own and in a batch of one (the SDK’s path), ids kept as sent', async () => {
    const message = request('call-7', 'tools/call', { name: 'read_file', arguments: { path: 'a.txt' } });
    const single = await post(message);
    expect(sdkAnswered()).toBe(0);
    const sdk = await throughSdk(message);
    expect(sdkAnswered()).toBe(1);
    expect(single.status).toBe(200);
    expect(single.body).toMatchObject({ jsonrpc: '2.0', id: 'call-7', result: { structuredContent: { content: 'one\ntwo\n' } } });
    expect({ ...single.body, result: withoutInvocationId(single.body.result) }).toEqual({
      ...sdk.body,
      result: withoutInvocationId(sdk.body.result),
    });
    expect(single.body.result._meta['dev.toolgate/invocationId']).toEqual(expect.any(String));
    expect(single.body.result._meta['dev.toolgate/invocationId']).not.toBe(sdk.body.result._meta['dev.toolgate/invocationId']);
    // At the batch's revision: revision 2025-11-25 also marks each tool as one that may be called as a task.
    const listed = await post(request(0, 'tools/list'), BATCH_REVISION);
    expect(listed.body.result.tools.map((tool: { name: string }) => tool.name)).toContain('read_file');
    expect(listed.body).toEqual((await throughSdk(request(0, 'tools/list'))).body);
    const withTasks = await post(request(0, 'tools/list'));
    expect(withTasks.body.result.tools[0].execution).toEqual({ taskSupport: 'optional' });
    // A batch of two gets an array of two answers.
    const two = await post([request(1, 'ping'), message], BATCH_REVISION);
    expect(two.body).toHaveLength(2);
  });

  it('refuses what the transport refuses, on either path: Accept, protocol revision, malformed messages', async () => {
    const list = request(1, 'tools/list');
    const notAcceptable = await post(list, { accept: 'application/json' });
    expect({ status: notAcceptable.status, code: notAcceptable.body.error.code }).toEqual({ status: 406, code: -32000 });
    const badVersion = await post(list, { 'mcp-protocol-version': '1999-01-01' });
    expect({ status: badVersion.status, code: badVersion.body.error.code }).toEqual({ status: 400, code: -32000 });
    expect(badVersion.body.error.message).toContain('Unsupported protocol version');
    const notificationWithBadVersion = await post(
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { 'mcp-protocol-version': '1999-01-01' },
    );
    expect(notificationWithBadVersion.status).toBe(400);
    // Unknown top-level keys, a fractional id, a wrong jsonrpc: not JSON-RPC messages.
    for (const bad of [
      { ...list, extra: 1 },
      { ...list, id: 1.5 },
      { ...list, jsonrpc: '1.0' },
    ]) {
      const refused = await post(bad);
      expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 400, code: -32700 });
    }
  });

  it('answers JSON-RPC errors through the SDK: an unknown method, invalid params, a batch mixing both', async () => {
    expect((await post(request(1, 'prompts/list'))).body).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32601 } });
    const arrayArguments = await post(request(2, 'tools/call', { name: 'read_file', arguments: ['a.txt'] }));
    expect(arrayArguments.body).toEqual(refusedBySdk(2));
    const noName = await post(request(3, 'tools/call', { arguments: { path: 'a.txt' } }));
    expect(noName.body).toEqual(refusedBySdk(3));
    const batch = await post([request('x', 'ping'), request('y', 'nope/nope')], BATCH_REVISION);
    expect(batch.body).toEqual(
      expect.arrayContaining([
        { jsonrpc: '2.0', id: 'x', result: {} },
        expect.objectContaining({ id: 'y', error: expect.objectContaining({ code: -32601 }) }),
      ]),
    );
  });

  it('refuses a tools/call whose params are not a call’s as invalid params (-32602), naming the field, before anything runs', async () => {
    const before = (await t.http.get(`/v1/projects/${projectId}/invocations`).query({ limit: 100 }).set(tenant.auth).expect(200)).body.items
      .length;
    const cases: Array<[unknown, string]> = [
      [{ name: 'read_file', arguments: ['a.txt'] }, 'arguments'],
      [{ arguments: { path: 'a.txt' } }, 'name'],
      // Revision 2025-11-25's task augmentation takes an object ({ ttl? }).
      [{ name: 'read_file', arguments: { path: 'a.txt' }, task: 'soon' }, 'task'],
      [{ name: 'read_file', arguments: { path: 'a.txt' }, task: { ttl: 'an hour' } }, 'ttl'],
    ];
    for (const [params, field] of cases) {
      const refused = await post(request(4, 'tools/call', params));
      expect({ field, status: refused.status, code: refused.body.error?.code }).toEqual({ field, status: 200, code: -32602 });
      expect(refused.body.error.message).toContain(`"${field}"`);
      expect(refused.body.result).toBeUndefined();
    }
    const after = (await t.http.get(`/v1/projects/${projectId}/invocations`).query({ limit: 100 }).set(tenant.auth).expect(200)).body.items
      .length;
    expect(after).toBe(before);
  });

  it('refuses a tool call’s arguments on the fast path exactly as on the SDK’s, before anything runs', async () => {
    for (const args of [{ path: 5 }, { path: '../outside.txt' }]) {
      const message = request(9, 'tools/call', { name: 'read_file', arguments: args });
      const single = (await post(message)).body.result;
      const batched = (await throughSdk(message)).body.result;
      expect(single.isError).toBe(true);
      expect(single).toEqual(batched);
      expect(single.structuredContent).toBeUndefined();
      expect(single._meta['dev.toolgate/error'].status).toBe('refused');
    }
  });
});
