import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { callTool, enableSkill, postSkill, uniqueName } from '../skills/skill-test-kit.js';

// An upstream MCP server written by hand (plain HTTP, no SDK), so that it can do what a well-behaved one
// never does: answer a tools/call as an event stream and close it before the result. `drop` ends the
// response cleanly after a progress notification (an event with an id, as a resumable server sends);
// `reset` tears the connection down mid-stream; `answer` is the stream as it should be.
class DroppingUpstream {
  private server: http.Server | null = null;
  readonly calls: string[] = [];
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    let text = '';
    for await (const chunk of req) text += String(chunk);
    const message = JSON.parse(text) as { id?: number; method: string; params?: { name?: string; protocolVersion?: string } };
    const json = (result: unknown) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    if (message.id === undefined) return void res.writeHead(202).end();
    switch (message.method) {
      case 'initialize':
        return void json({
          protocolVersion: message.params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'dropping', version: '1' },
        });
      case 'tools/list':
        return void json({
          tools: ['drop', 'reset', 'answer'].map((name) => ({
            name,
            description: `Answers as a stream that ${name}s`,
            inputSchema: { type: 'object', properties: {} },
          })),
        });
      case 'tools/call': {
        const name = message.params?.name ?? '';
        this.calls.push(name);
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write(
          `id: ev-1\nevent: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'working' } })}\n\n`,
        );
        if (name === 'answer') {
          return void res.end(
            `id: ev-2\nevent: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'done' }] } })}\n\n`,
          );
        }
        // A moment, so that the first event reaches the client before the stream goes.
        await new Promise((resolve) => setTimeout(resolve, 50));
        if (name === 'reset') return void res.socket?.destroy();
        return void res.end();
      }
      default:
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } }));
    }
  }
}

describe('an upstream MCP server that drops its event stream mid-call', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  const upstream = new DroppingUpstream();

  beforeAll(async () => {
    await upstream.start();
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}` } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    const imported = await postSkill(t, tenant, {
      name: uniqueName('dropping'),
      version: '1.0.0',
      description: 'Streams that end early',
      source: { type: 'mcp', url: upstream.url, tools: ['drop', 'reset', 'answer'] },
    });
    expect({ status: imported.status, body: imported.status === 201 ? 'imported' : imported.body }).toEqual({
      status: 201,
      body: 'imported',
    });
    expect((await enableSkill(t, tenant, projectId, imported.body.id as string)).status).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
    await upstream.stop();
  });

  it('answers a call whose stream closed before its result at once, with an error that says so, not at the tool timeout', async () => {
    for (const tool of ['drop', 'reset']) {
      const started = Date.now();
      const res = await callTool(t, tenant, projectId, tool, {}, { timeoutMs: 20_000 }).expect(200);
      const took = Date.now() - started;
      expect({ tool, status: res.body.status, code: res.body.error?.code, retryable: res.body.error?.retryable }).toEqual({
        tool,
        status: 'error',
        // A torn connection is the network's error; a stream ended cleanly, the relay's own.
        code: tool === 'drop' ? 'upstream_stream_closed' : expect.stringMatching(/^(upstream_\w+|network_error)$/),
        retryable: true,
      });
      expect({ tool, message: res.body.error.message as string }).toEqual({
        tool,
        message: expect.stringContaining(`127.0.0.1:${upstream.port}`),
      });
      expect({ tool, fast: took < 5_000 }).toEqual({ tool, fast: true });
    }
    expect(upstream.calls).toEqual(expect.arrayContaining(['drop', 'reset']));
  });

  it('still relays a stream that carries its result, and the next call after a dropped one', async () => {
    await callTool(t, tenant, projectId, 'drop', {}, { timeoutMs: 20_000 }).expect(200);
    const res = await callTool(t, tenant, projectId, 'answer', {}).expect(200);
    expect(res.body).toMatchObject({ status: 'ok' });
    expect(JSON.stringify(res.body.result)).toContain('done');
  });
});
