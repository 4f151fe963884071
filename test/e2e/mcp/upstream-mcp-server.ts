import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';

// A real MCP server on loopback, built with the official SDK and its stateful Streamable HTTP transport
// (sessions), playing the tenant's upstream: tools that answer, fail, hang or answer too much, and one
// whose schema points at a remote $ref. `restart()` forgets every session, like a redeployed server.
export const UPSTREAM_TOOLS: Tool[] = [
  {
    name: 'echo',
    description: 'Echoes its text',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string', maxLength: 100 } },
      required: ['text'],
      additionalProperties: false,
    },
    outputSchema: { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'] },
    annotations: { readOnlyHint: true, destructiveHint: false },
  },
  { name: 'fail', description: 'Always fails', inputSchema: { type: 'object', properties: {} } },
  { name: 'hang', description: 'Never answers', inputSchema: { type: 'object', properties: {} } },
  { name: 'flood', description: 'Answers 10 MiB', inputSchema: { type: 'object', properties: {} } },
  {
    name: 'crowd',
    description: 'Answers `count` tiny content items',
    inputSchema: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] },
  },
  {
    name: 'remote_ref',
    description: 'A schema with a remote $ref',
    inputSchema: { type: 'object', properties: { a: { $ref: 'https://schemas.example.com/a.json' } } },
  },
];

export class UpstreamMcpServer {
  readonly calls: string[] = [];
  // The request target (path and query) of every HTTP request received.
  readonly requestUrls: string[] = [];
  private sessions = new Map<string, StreamableHTTPServerTransport>();
  private server: http.Server | null = null;
  port = 0;
  // Answers as plain JSON; an upstream that sends notifications while a call runs answers as an event stream.
  protected readonly jsonResponse: boolean = true;

  // What tools/list answers; a test may change it to play an upstream that changes its definitions.
  constructor(public tools: Tool[] = UPSTREAM_TOOLS) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  async start(port = 0): Promise<void> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start(this.port);
  }

  async stop(): Promise<void> {
    for (const transport of this.sessions.values()) await transport.close();
    this.sessions = new Map();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.requestUrls.push(req.url ?? '');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body: unknown = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    if (await this.answerModern(req, res, body)) return;
    const sessionId = req.headers['mcp-session-id'] as string | undefined;
    let transport = sessionId ? this.sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId || !isInitializeRequest(body)) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        enableJsonResponse: this.jsonResponse,
        onsessioninitialized: (id) => void this.sessions.set(id, created),
      });
      transport = created;
      await this.mcpServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  }

  // A request of protocol revision 2026-07-28 (no sessions), answered by a subclass that speaks it: true
  // when it answered. This one does not: such a request finds no session (404), as with an SDK 1.x server.
  protected answerModern(_req: http.IncomingMessage, _res: http.ServerResponse, _body: unknown): Promise<boolean> {
    return Promise.resolve(false);
  }

  protected mcpServer(): Server {
    const server = new Server({ name: 'upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.tools }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      this.calls.push(request.params.name);
      switch (request.params.name) {
        case 'echo': {
          const text = String(request.params.arguments?.text);
          return { content: [{ type: 'text', text }], structuredContent: { echo: text } };
        }
        case 'fail':
          return { isError: true, content: [{ type: 'text', text: 'upstream says no' }] };
        case 'hang':
          return new Promise<never>(() => undefined);
        case 'flood':
          return { content: [{ type: 'text', text: 'x'.repeat(10 * 1024 * 1024) }] };
        case 'crowd':
          return {
            content: Array.from({ length: Number(request.params.arguments?.count) }, (_, i) => ({
              type: 'text' as const,
              text: String(i),
            })),
          };
        default:
          return { isError: true, content: [{ type: 'text', text: 'unknown tool' }] };
      }
    });
    return server;
  }
}
