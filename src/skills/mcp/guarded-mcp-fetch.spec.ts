import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ToolError } from '../../execution/tool-error.js';
import { guardedMcpFetch } from './guarded-mcp-fetch.js';

// The messages of an upstream that is too slow or answers too much name the server without the
// credential its URL carries: they reach the audit, the events and the model.
describe('guardedMcpFetch', () => {
  let server: http.Server;
  let origin: string;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url?.startsWith('/silent')) return void setTimeout(() => res.end('{}'), 1000).unref();
      if (req.url?.startsWith('/stall')) {
        res.writeHead(200, { 'content-type': 'application/json' }).write('{');
        return void setTimeout(() => res.end('}'), 1000).unref();
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('x'.repeat(2048));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const post = (path: string, timeoutMs: number) =>
    guardedMcpFetch({ allowHosts: [new URL(origin).host], timeoutMs, maxBytes: 1024 })(`${origin}${path}`, {
      method: 'POST',
      body: '{}',
    }).then(
      () => null,
      (error: unknown) => error,
    );

  it('upstream_timeout (an answer that stalls) and a server that never answers mask the key in the URL', async () => {
    const stalled = await post('/stall?api_key=secret-0123456789&x=1', 100);
    expect(stalled).toBeInstanceOf(ToolError);
    expect(stalled).toMatchObject({
      code: 'upstream_timeout',
      message: `The MCP server at ${origin}/stall?api_key=[redacted]&x=1 did not answer within 100 ms`,
    });
    const silent = await post('/silent?api_key=secret-0123456789', 100);
    expect(silent).toMatchObject({ code: 'timeout', message: `No response from ${origin}/silent?api_key=[redacted] within 100 ms` });
  });

  it('upstream_too_large masks the key in the URL', async () => {
    const error = await post('/big?token=secret-0123456789', 2000);
    expect(error).toMatchObject({
      code: 'upstream_too_large',
      message: `The MCP server at ${origin}/big?token=[redacted] answered more than 1024 bytes; the answer was dropped`,
    });
  });
});
