import http from 'node:http';
import type { AddressInfo } from 'node:net';

// An HTTP proxy on loopback that adds one header (the tenant's key) to every request and otherwise relays
// both ways untouched: method, path, Host, Origin, body and streamed answers. It stands in for an MCP
// client configured with an Authorization header, for a client that has no way to send one.
export class KeyAddingProxy {
  private server: http.Server | null = null;
  port = 0;

  constructor(
    private readonly targetPort: number,
    private readonly header: Record<string, string>,
  ) {}

  async start(): Promise<number> {
    this.server = http.createServer((req, res) => {
      const upstream = http.request(
        {
          host: '127.0.0.1',
          port: this.targetPort,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, ...lowerCased(this.header) },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this.port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    server?.closeAllConnections();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const lowerCased = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
