import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type LoggingLevel,
  type LoggingMessageNotification,
  SetLevelRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { UpstreamMcpServer } from './upstream-mcp-server.js';

// A tenant's upstream MCP server that logs while its tools run (it declares logging): `chatty` logs once at
// every level, whatever level it was asked for, then once quoting the credential it was sent; `noisy` logs
// 150 messages at info.
export const LEVELS: LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
export const LOGGING_SECRET = 'upstream-log-secret-4f9a1c2e7b';
const NO_ARGUMENTS = { type: 'object', properties: {} } as const;
export const LOGGING_TOOLS: Tool[] = [
  { name: 'chatty', description: 'Logs one message at every level, then one quoting its credential', inputSchema: NO_ARGUMENTS },
  { name: 'noisy', description: 'Logs 150 messages at info level', inputSchema: NO_ARGUMENTS },
];

// A deep object with the credential at the bottom: redaction must reach it however deep it is.
const deep = (depth: number): unknown => (depth === 0 ? { token: LOGGING_SECRET } : { inner: deep(depth - 1) });

export class LoggingUpstream extends UpstreamMcpServer {
  protected override readonly jsonResponse = false;
  // Every level Toolgate asked this server for (logging/setLevel on its session).
  readonly levelsAsked: string[] = [];

  constructor() {
    super(LOGGING_TOOLS);
  }

  protected override mcpServer(): Server {
    const server = new Server({ name: 'logging-upstream', version: '1.0.0' }, { capabilities: { tools: {}, logging: {} } });
    server.setRequestHandler(SetLevelRequestSchema, (request) => {
      this.levelsAsked.push(request.params.level);
      return {};
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.tools }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      this.calls.push(request.params.name);
      const log = (params: LoggingMessageNotification['params']) => extra.sendNotification({ method: 'notifications/message', params });
      if (request.params.name === 'chatty') {
        // Whatever level it was asked for: Toolgate filters too.
        for (const level of LEVELS) await log({ level, logger: 'chatty', data: { level } });
        await log({ level: 'error', data: { said: `my token is ${LOGGING_SECRET}`, nested: deep(40) } });
      } else {
        for (let i = 0; i < 150; i++) await log({ level: 'info', data: `message ${i}` });
      }
      return { content: [{ type: 'text', text: `${request.params.name} done` }] };
    });
    return server;
  }
}
