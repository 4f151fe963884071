import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from './metrics.js';
import { MetricsAccess } from './metrics-access.js';

// METRICS_PORT: a plain node:http listener that answers GET /metrics and nothing else. It is not the Nest
// app, so no guard, pipe, rate limit or request log touches a scrape, and the service's port can stay
// closed to scrapers. With METRICS_TOKEN set, it asks for the token too.
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server: Server | null = null;
  private readonly access: MetricsAccess;

  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.access = new MetricsAccess(config.metrics.token);
  }

  // The port it listens on (METRICS_PORT=0 lets the system choose), or null when there is none.
  get port(): number | null {
    const address = this.server?.address();
    return address && typeof address === 'object' ? address.port : null;
  }

  async onApplicationBootstrap(): Promise<void> {
    const { port, host } = this.config.metrics;
    if (port === null) return;
    const server = createServer((req, res) => void this.answer(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host ?? this.config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.logger.log(`metrics on http://${host ?? this.config.host}:${this.port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url?.split('?')[0];
    if (path !== '/metrics') return send(res, 404, 'application/json', error('route_not_found', `No route for ${req.method} ${path}`));
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(res, 405, 'application/json', error('method_not_allowed', 'Only GET /metrics'));
    const refusal = this.access.refusal(req.headers.authorization);
    if (refusal) return send(res, refusal.status, 'application/json', error(refusal.code, refusal.message));
    try {
      send(res, 200, this.metrics.contentType, await this.metrics.render());
    } catch (caught) {
      this.logger.error(caught instanceof Error ? caught : String(caught));
      send(res, 500, 'application/json', error('internal_error', 'The metrics could not be collected; it has been logged'));
    }
  }
}

const error = (code: string, message: string) => JSON.stringify({ error: { code, message } });

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
