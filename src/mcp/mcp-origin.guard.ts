import { type CanActivate, type ExecutionContext, Inject, Injectable, Logger } from '@nestjs/common';
import { bareHostName, type HostAndPort, ServiceHostNames, shownHeader } from '../common/http/service-host-names.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { hostNotAllowed, originNotAllowed } from './mcp.errors.js';

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

// The Streamable HTTP transport requires a server to refuse a browser's request from a foreign Origin, and a
// Host that is not its own defeats DNS rebinding (a page whose name was pointed at this service sends its own
// name as Host, and as Origin). So the Host must be one of the service's names and the Origin, when a browser
// sends one, the service's own origin or one the operator listed. A client that is not a browser sends no
// Origin and is not asked for one. Refused before the endpoint looks at the project or runs anything.
@Injectable()
export class McpOriginGuard implements CanActivate {
  private readonly names: ServiceHostNames;
  private readonly origins: Set<string>;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.names = new ServiceHostNames(config);
    this.origins = new Set(config.transport.mcpAllowedOrigins);
    if (!this.names.configured && config.nodeEnv === 'production') {
      new Logger('Mcp').warn(
        `ALLOWED_HOSTS is not set: the MCP endpoint answers only to ${this.names.describe()}; list the names clients use to reach the service`,
      );
    }
  }

  canActivate(context: ExecutionContext): boolean {
    const headers = context.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>().headers;
    const host = this.names.ownHost(headers.host);
    if (host === null) throw hostNotAllowed(shownHeader(headers.host));
    const origin = Array.isArray(headers.origin) ? headers.origin[0] : headers.origin;
    if (origin !== undefined && !this.originAllowed(origin, host)) throw originNotAllowed(shownHeader(origin));
    return true;
  }

  // The service's own origin is the one the request was sent to (its Host, already one of the service's
  // names), whichever scheme a proxy in front terminated.
  private originAllowed(origin: string, host: HostAndPort): boolean {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    if (this.origins.has(url.origin)) return true;
    const defaultPort = DEFAULT_PORTS[url.protocol];
    return bareHostName(url.hostname) === host.name && (url.port || defaultPort) === (host.port || defaultPort);
  }
}
