// The MCP SDK's own stateless Streamable HTTP server with one read tool, in a bare process: what Toolgate's
// MCP endpoint is set beside. It follows the SDK's stateless example (createMcpExpressApp, then a fresh
// McpServer and StreamableHTTPServerTransport per POST), answering with JSON as Toolgate does. read_file
// takes the same arguments (a path relative to the root, optional 1-based line offset and limit), keeps
// the path inside MCP_ROOT, reads the file and answers text plus structuredContent. No auth, no database,
// no audit, no rate limit, no worker thread.
// Usage: PORT=8080 MCP_ROOT=/some/dir node bench/mcp-http-server.mjs
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod/v4';

const port = Number(process.env.PORT ?? 8080);
const host = process.env.HOST ?? '127.0.0.1';
const root = path.resolve(process.env.MCP_ROOT ?? process.cwd());

async function readText({ path: relative, offset = 1, limit }) {
  const full = path.resolve(root, relative);
  const inside = path.relative(root, full);
  if (inside.startsWith('..') || path.isAbsolute(inside)) {
    return { isError: true, content: [{ type: 'text', text: `The path '${relative}' is outside the root` }] };
  }
  const lines = (await readFile(full, 'utf8')).split('\n');
  const end = limit === undefined ? lines.length : Math.min(lines.length, offset - 1 + limit);
  const result = {
    path: relative,
    content: lines.slice(offset - 1, end).join('\n'),
    offset,
    lines: end - offset + 1,
    totalLines: lines.length,
  };
  return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
}

function serverFor() {
  const server = new McpServer({ name: 'bare-sdk-read', version: '1.0.0' });
  server.registerTool(
    'read_file',
    {
      description: 'Read a text file under the root, by lines',
      inputSchema: {
        path: z.string().min(1).max(4096).describe('Path relative to the root'),
        offset: z.number().int().min(1).optional().describe('First line to read, 1-based'),
        limit: z.number().int().min(1).max(100000).optional().describe('Most lines to return'),
      },
      outputSchema: {
        path: z.string(),
        content: z.string(),
        offset: z.number(),
        lines: z.number(),
        totalLines: z.number(),
      },
      annotations: { readOnlyHint: true },
    },
    readText,
  );
  return server;
}

const app = createMcpExpressApp({ host });
app.get('/health', (_req, res) => res.json({ status: 'ok' }));
app.post('/mcp', async (req, res) => {
  const server = serverFor();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  } catch (error) {
    process.stderr.write(`MCP request failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    if (!res.headersSent) res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
  }
});
// Stateless: no stream to open, no session to end.
const notAllowed = (_req, res) =>
  res.status(405).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed' }, id: null });
app.get('/mcp', notAllowed);
app.delete('/mcp', notAllowed);

const server = app.listen(port, host);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
