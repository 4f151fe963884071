import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  EmptyResultSchema,
  ErrorCode,
  type LoggingLevel,
  type LoggingMessageNotification,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { enableSkill, postSkill, uniqueName } from '../skills/skill-test-kit.js';
import { connectMcp, refusedWith, textOf, type TextResult, withEnvelope } from './mcp-test-kit.js';
import { LOGGING_SECRET as SECRET, LOGGING_TOOLS as TOOLS, LoggingUpstream } from './logging-upstream.js';

// MCP logging through a project's endpoint: a client sets a level with logging/setLevel on one POST (or,
// under revision 2026-07-28, names it in a request's _meta), and the log messages its MCP source's upstream
// server sends while a call runs reach it on that call's event stream, at or above the level, without the
// credentials Toolgate sent the upstream.

describe('MCP logging: the upstream’s log messages relayed at the level a client set', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let agentKey: Record<string, string>;
  let otherKey: Record<string, string>;
  const upstream = new LoggingUpstream();
  const clients: Client[] = [];

  // An SDK client that collects the log messages it receives.
  async function loggingClient(
    auth: Record<string, string>,
  ): Promise<{ client: Client; received: Array<LoggingMessageNotification['params']> }> {
    const client = await connectMcp(t, projectId, auth);
    clients.push(client);
    const received: Array<LoggingMessageNotification['params']> = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void received.push(notification.params));
    return { client, received };
  }

  async function newKey(name: string): Promise<Record<string, string>> {
    const key = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ name, role: 'agent', projectIds: [projectId] })
      .expect(201);
    return { Authorization: `Bearer ${key.body.key as string}` };
  }

  // One tools/call POSTed by hand: the answer's content type and its body as text.
  async function rawCall(
    auth: Record<string, string>,
    name: string,
    headers: Record<string, string> = {},
    meta?: Record<string, unknown>,
    endpoint = '/mcp',
  ) {
    const params = { name, arguments: {}, ...(meta ? { _meta: meta } : {}) };
    return rawPost(
      auth,
      {
        jsonrpc: '2.0',
        id: 11,
        method: 'tools/call',
        params: headers['mcp-protocol-version'] === '2026-07-28' ? withEnvelope(params) : params,
      },
      headers,
      endpoint,
    );
  }

  async function rawPost(auth: Record<string, string>, body: unknown, headers: Record<string, string> = {}, endpoint = '/mcp') {
    const port = t.port;
    const res = await fetch(`http://127.0.0.1:${port}/v1/projects/${projectId}${endpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers, ...auth },
      body: JSON.stringify(body),
    });
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
  }
  const messagesIn = (text: string) => (text.match(/"method":"notifications\/message"/g) ?? []).length;

  beforeAll(async () => {
    await upstream.start();
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}` } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    const source = {
      type: 'mcp',
      url: upstream.url,
      headers: { Authorization: `Bearer ${SECRET}` },
      tools: TOOLS.map((tool) => tool.name),
    };
    const imported = await postSkill(t, tenant, {
      name: uniqueName('logging'),
      version: '1.0.0',
      description: 'An upstream that logs',
      source,
    });
    expect(imported.status).toBe(201);
    expect((await enableSkill(t, tenant, projectId, imported.body.id as string)).status).toBe(201);
    agentKey = await newKey('logging-agent');
    otherKey = await newKey('logging-other');
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await t.close();
    await upstream.stop();
  });

  it('declares logging, where an MCP source the key may use declares it', async () => {
    const { client } = await loggingClient(agentKey);
    expect(client.getServerCapabilities()?.logging).toEqual({});
  });

  it('refuses a level MCP does not define, or none, naming the parameter and the levels', async () => {
    const { client } = await loggingClient(agentKey);
    const refused = await refusedWith(
      client.request({ method: 'logging/setLevel', params: { level: 'verbose' as LoggingLevel } }, EmptyResultSchema),
    );
    expect(refused.code).toBe(ErrorCode.InvalidParams);
    expect(refused.message).toContain('params.level must be one of debug, info, notice, warning, error, critical, alert, emergency');
    const none = await rawPost(agentKey, { jsonrpc: '2.0', id: 3, method: 'logging/setLevel' }, { 'mcp-protocol-version': '2025-11-25' });
    expect(JSON.parse(none.text)).toMatchObject({
      id: 3,
      error: { code: ErrorCode.InvalidParams, message: expect.stringContaining('params.level must be one of') },
    });
  });

  it('relays, on the next POST’s call, the messages at or above the level set, asks the upstream for that level, and blanks the credential however deep', async () => {
    const { client, received } = await loggingClient(agentKey);
    expect(await client.setLoggingLevel('warning')).toEqual({});
    const result = (await client.callTool({ name: 'chatty', arguments: {} })) as TextResult;
    expect(textOf(result)).toBe('chatty done');
    expect(received.map((message) => message.level)).toEqual(['warning', 'error', 'critical', 'alert', 'emergency', 'error']);
    expect(received[0]).toEqual({ level: 'warning', logger: 'chatty', data: { level: 'warning' } });
    // No logger named: the tool's.
    expect(received[5].logger).toBe('chatty');
    const text = JSON.stringify(received);
    expect(text).not.toContain(SECRET);
    expect(text).toContain('my token is [redacted]');
    expect((text.match(/\[redacted\]/g) ?? []).length).toBe(2);
    expect(upstream.levelsAsked.at(-1)).toBe('warning');
    // The call is audited like any other.
    const id = (result._meta as Record<string, unknown>)['dev.toolgate/invocationId'] as string;
    const row = await t.http.get(`/v1/projects/${projectId}/invocations/${id}`).set(tenant.auth).expect(200);
    expect(row.body).toMatchObject({ tool: 'chatty', channel: 'mcp', status: 'ok' });
  });

  it('keeps the level to the key that set it: another key’s calls in the project are answered as JSON, with no log messages', async () => {
    const { client } = await loggingClient(agentKey);
    await client.setLoggingLevel('debug');
    const other = await rawCall(otherKey, 'chatty', { 'mcp-protocol-version': '2025-11-25' });
    expect(other.status).toBe(200);
    expect(other.contentType).toContain('application/json');
    expect(other.text).not.toContain('notifications/message');
    const own = await rawCall(agentKey, 'chatty', { 'mcp-protocol-version': '2025-11-25' });
    expect(own.contentType).toContain('text/event-stream');
    expect((own.text.match(/"method":"notifications\/message"/g) ?? []).length).toBe(9);
  });

  it('starts a new session without a level: after the key initializes again, its calls carry no log messages', async () => {
    const first = await loggingClient(agentKey);
    await first.client.setLoggingLevel('debug');
    const second = await loggingClient(agentKey);
    await second.client.callTool({ name: 'chatty', arguments: {} });
    expect(second.received).toEqual([]);
    expect((await rawCall(agentKey, 'chatty', { 'mcp-protocol-version': '2025-11-25' })).contentType).toContain('application/json');
  });

  it('starts a new session on an initialize inside a JSON-RPC batch too (revision 2025-03-26)', async () => {
    const { client } = await loggingClient(agentKey);
    await client.setLoggingLevel('debug');
    expect(messagesIn((await rawCall(agentKey, 'chatty', { 'mcp-protocol-version': '2025-11-25' })).text)).toBe(9);
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'batch', version: '1' } },
    };
    // Beside other messages, the transport refuses it (400): no session starts, the level holds.
    expect((await rawPost(agentKey, [initialize, { jsonrpc: '2.0', id: 2, method: 'ping' }])).status).toBe(400);
    expect(messagesIn((await rawCall(agentKey, 'chatty', { 'mcp-protocol-version': '2025-11-25' })).text)).toBe(9);
    const batch = await rawPost(agentKey, [initialize]);
    expect(batch.status).toBe(200);
    expect(JSON.parse(batch.text)).toMatchObject({ id: 1, result: { protocolVersion: '2025-03-26' } });
    expect(messagesIn((await rawCall(agentKey, 'chatty', { 'mcp-protocol-version': '2025-11-25' })).text)).toBe(0);
  });

  it('relays nothing through a toolset’s endpoint, which declares no logging, and leaves the project endpoint’s level alone', async () => {
    await t.http
      .post(`/v1/projects/${projectId}/toolsets`)
      .set(tenant.auth)
      .send({ slug: 'quiet-names', name: 'Renamed', mode: 'direct', tools: [{ select: 'chatty', name: 'renamed_chatty' }] })
      .expect(201);
    const { client } = await loggingClient(agentKey);
    await client.setLoggingLevel('debug');
    const toolset = await connectMcp(t, projectId, agentKey, '/toolsets/quiet-names/mcp');
    clients.push(toolset);
    expect(toolset.getServerCapabilities()?.logging).toBeUndefined();
    const viaToolset = await rawCall(
      agentKey,
      'renamed_chatty',
      { 'mcp-protocol-version': '2025-11-25' },
      undefined,
      '/toolsets/quiet-names/mcp',
    );
    expect(viaToolset.contentType).toContain('application/json');
    expect(viaToolset.text).toContain('chatty done');
    const modern = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'renamed_chatty' };
    const modernViaToolset = await rawCall(
      agentKey,
      'renamed_chatty',
      modern,
      { 'io.modelcontextprotocol/logLevel': 'debug' },
      '/toolsets/quiet-names/mcp',
    );
    expect(messagesIn(modernViaToolset.text)).toBe(0);
    // The toolset client's initialize left the level set on the project endpoint.
    expect(messagesIn((await rawCall(agentKey, 'chatty', { 'mcp-protocol-version': '2025-11-25' })).text)).toBe(9);
  });

  it('relays at most 100 messages of one call, then says the rest were dropped', async () => {
    const { client, received } = await loggingClient(agentKey);
    await client.setLoggingLevel('info');
    await client.callTool({ name: 'noisy', arguments: {} });
    expect(received.length).toBe(101);
    expect(received[99]).toMatchObject({ level: 'info', data: 'message 99' });
    expect(received[100]).toMatchObject({ level: 'warning', data: 'More than 100 log messages in one call: the rest were dropped' });
  });

  describe('under revision 2026-07-28', () => {
    const modern = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'chatty' };

    it('relays what a request’s _meta level asks for, and nothing to a request without one, whatever logging/setLevel set', async () => {
      const { client } = await loggingClient(agentKey);
      await client.setLoggingLevel('debug');
      const asked = await rawCall(agentKey, 'chatty', modern, { 'io.modelcontextprotocol/logLevel': 'critical' });
      expect(asked.contentType).toContain('text/event-stream');
      const levels = [...asked.text.matchAll(/"method":"notifications\/message","params":\{"level":"(\w+)"/g)].map((m) => m[1]);
      expect(levels).toEqual(['critical', 'alert', 'emergency']);
      const silent = await rawCall(agentKey, 'chatty', modern);
      expect(silent.contentType).toContain('application/json');
      expect(JSON.parse(silent.text)).toMatchObject({
        result: { resultType: 'complete', content: [{ type: 'text', text: 'chatty done' }] },
      });
    });

    it('refuses a _meta level MCP does not define', async () => {
      const refused = await rawCall(agentKey, 'chatty', modern, { 'io.modelcontextprotocol/logLevel': 'loud' });
      expect(JSON.parse(refused.text)).toMatchObject({
        error: {
          code: ErrorCode.InvalidParams,
          message: expect.stringContaining('_meta["io.modelcontextprotocol/logLevel"] must be one of debug'),
        },
      });
    });
  });
});
