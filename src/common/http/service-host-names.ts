import os from 'node:os';
import type { AppConfig } from '../../config/app-config.js';

export interface HostAndPort {
  name: string;
  port: string;
}

const WILDCARD_ADDRESSES = new Set(['', '0.0.0.0', '::', '[::]']);

// The names the service answers to (ALLOWED_HOSTS, else loopback names, HOST, and when listening on every
// address this machine's name and addresses). A Host that is none of them is a DNS-rebinding page's own name,
// or a forged header a document must not echo back as the service's address.
export class ServiceHostNames {
  readonly configured: boolean;
  private readonly anyHost: boolean;
  private readonly hosts: Set<string>;
  private readonly domains: string[];

  constructor(config: AppConfig) {
    const configured = config.transport.allowedHosts;
    const entries = configured ?? defaultHostNames(config.host);
    this.configured = configured !== null;
    this.anyHost = entries.includes('*');
    this.hosts = new Set(entries.filter((h) => !h.startsWith('*')).map(bareHostName));
    this.domains = entries.filter((h) => h.startsWith('*.')).map((h) => h.slice(1));
  }

  // The names listed, for a log line.
  describe(): string {
    return [...this.hosts].join(', ');
  }

  // The Host header, parsed, when it is one of the service's names; else null.
  ownHost(header: string | string[] | undefined): HostAndPort | null {
    const host = parseHost(Array.isArray(header) ? header[0] : header);
    return host !== null && this.isOwnName(host.name) ? host : null;
  }

  private isOwnName(name: string): boolean {
    return this.anyHost || this.hosts.has(name) || this.domains.some((domain) => name.endsWith(domain));
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

export const bareHostName = (name: string): string =>
  name
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '');

// "name", "name:port", "[v6]" or "[v6]:port"; null when it is none of them.
function parseHost(value: string | undefined): HostAndPort | null {
  if (value === undefined) return null;
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+)(?::(\d{1,5}))?$/.exec(value.trim());
  return match ? { name: bareHostName(match[1]), port: match[2] ?? '' } : null;
}

// What the client sent, printable and short, for a message.
export const shownHeader = (value: string | string[] | undefined): string =>
  ((Array.isArray(value) ? value[0] : value) ?? '').replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
