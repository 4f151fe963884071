import os from 'node:os';
import { type CanActivate, type ExecutionContext, Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { hostNotAllowed, originNotAllowed } from './mcp.errors.js';

interface HostAndPort {
  name: string;
  port: string;
}

const WILDCARD_ADDRESSES = new Set(['', '0.0.0.0', '::', '[::]']);
const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

// The Streamable HTTP transport requires a server to refuse a browser's request from a foreign Origin, and a
// Host that is not its own defeats DNS rebinding (a page whose name was pointed at this service sends its own
// name as Host, and as Origin). So the Host must be one of the service's names and the Origin, when a browser
// sends one, the service's own origin or one the operator listed. A client that is not a browser sends no
// Origin and is not asked for one. Refused before the endpoint looks at the project or runs anything.
@Injectable()
export class McpOriginGuard implements CanActivate {
  private readonly anyHost: boolean;
  private readonly hosts: Set<string>;
  private readonly domains: string[];
  private readonly origins: Set<string>;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const configured = config.transport.allowedHosts;
    const entries = configured ?? defaultHostNames(config.host);
    this.anyHost = entries.includes('*');
    this.hosts = new Set(entries.filter((h) => !h.startsWith('*')).map(bare));
    this.domains = entries.filter((h) => h.startsWith('*.')).map((h) => h.slice(1));
    this.origins = new Set(config.transport.mcpAllowedOrigins);
    if (configured === null && config.nodeEnv === 'production') {
      new Logger('Mcp').warn(
        `ALLOWED_HOSTS is not set: the MCP endpoint answers only to ${[...this.hosts].join(', ')}; list the names clients use to reach the service`,
      );
    }
  }

  canActivate(context: ExecutionContext): boolean {
    const headers = context.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>().headers;
    const host = parseHost(single(headers.host));
    if (host === null || !this.isOwnName(host.name)) throw hostNotAllowed(shown(single(headers.host)));
    const origin = single(headers.origin);
    if (origin !== undefined && !this.originAllowed(origin, host)) throw originNotAllowed(shown(origin));
    return true;
  }

  private isOwnName(name: string): boolean {
    return this.anyHost || this.hosts.has(name) || this.domains.some((domain) => name.endsWith(domain));
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
    return bare(url.hostname) === host.name && (url.port || defaultPort) === (host.port || defaultPort);
  }
}

// Loopback names, HOST when it names one address, and otherwise (listening on every address) this machine's
// name and addresses: a rebinding page cannot make a browser send any of these as its Host.
function defaultHostNames(host: string): string[] {
  const names = ['localhost', '127.0.0.1', '::1', os.hostname().toLowerCase()];
  if (!WILDCARD_ADDRESSES.has(host.toLowerCase())) return [...names, host.toLowerCase()];
  const addresses = Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address.toLowerCase()));
  return [...names, ...addresses];
}

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

const bare = (name: string): string => name.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.+$/, '');

// "name", "name:port", "[v6]" or "[v6]:port"; null when it is none of them.
function parseHost(value: string | undefined): HostAndPort | null {
  if (value === undefined) return null;
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+)(?::(\d{1,5}))?$/.exec(value.trim());
  return match ? { name: bare(match[1]), port: match[2] ?? '' } : null;
}

// What the client sent, printable and short, for the message.
const shown = (value: string | undefined): string => (value ?? '').replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
