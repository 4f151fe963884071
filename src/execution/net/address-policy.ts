import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface AddressVerdict {
  allowed: boolean;
  reason?: string;
}

type V4 = ipaddr.IPv4;
type V6 = ipaddr.IPv6;

// First match wins, so the specific metadata addresses come before the ranges that contain them.
const V4_FORBIDDEN: ReadonlyArray<readonly [V4, number, string]> = (
  [
    ['169.254.169.254/32', 'a link-local/cloud metadata address'],
    ['169.254.170.2/32', 'a link-local/cloud metadata address (container credentials)'],
    ['100.100.100.200/32', 'a cloud metadata address'],
    ['192.0.0.192/32', 'a cloud metadata address'],
    ['0.0.0.0/8', 'an unspecified ("this network") address'],
    ['10.0.0.0/8', 'a private address'],
    ['100.64.0.0/10', 'a carrier-grade NAT (shared) address'],
    ['127.0.0.0/8', 'a loopback address'],
    ['169.254.0.0/16', 'a link-local address'],
    ['172.16.0.0/12', 'a private address'],
    ['192.0.0.0/24', 'a reserved (IETF protocol assignment) address'],
    ['192.0.2.0/24', 'a documentation address'],
    ['192.88.99.0/24', 'a reserved (6to4 relay anycast) address'],
    ['192.168.0.0/16', 'a private address'],
    ['198.18.0.0/15', 'a benchmarking address'],
    ['198.51.100.0/24', 'a documentation address'],
    ['203.0.113.0/24', 'a documentation address'],
    ['224.0.0.0/4', 'a multicast address'],
    ['255.255.255.255/32', 'the broadcast address'],
    ['240.0.0.0/4', 'a reserved address'],
  ] as const
).map(([cidr, label]) => [...ipaddr.IPv4.parseCIDR(cidr), label] as const);

const V6_FORBIDDEN: ReadonlyArray<readonly [V6, number, string]> = (
  [
    ['::/128', 'an unspecified address'],
    ['::1/128', 'a loopback address'],
    ['fd00:ec2::254/128', 'a unique-local/cloud metadata address'],
    ['fe80::/10', 'a link-local address'],
    ['fec0::/10', 'a site-local address'],
    ['fc00::/7', 'a unique-local (private) address'],
    ['ff00::/8', 'a multicast address'],
    ['100::/64', 'a discard-only address'],
    // Teredo hides the client's IPv4 behind an XOR and tunnels through a relay: nothing to check, so refuse.
    ['2001::/32', 'a Teredo tunnel address'],
    ['2001:db8::/32', 'a documentation address'],
    ['2001::/23', 'a reserved (IETF protocol assignment) address'],
    ['3fff::/20', 'a documentation address'],
    // The local-use NAT64 prefix reaches an operator's own translator, and where the IPv4 sits inside it varies.
    ['64:ff9b:1::/48', 'a local-use NAT64 address'],
  ] as const
).map(([cidr, label]) => [...ipaddr.IPv6.parseCIDR(cidr), label] as const);

const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const METADATA = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', '192.0.0.192', 'fd00:ec2::254']);

// Forms that carry an IPv4 address inside an IPv6 one (in two 16-bit parts from `at`); the kernel or a
// translator reaches that IPv4, so it is the IPv4 that is judged.
const EMBEDDED_V4: ReadonlyArray<readonly [V6, number, string, number]> = (
  [
    ['::ffff:0:0/96', 'an IPv4-mapped', 6],
    ['::ffff:0:0:0/96', 'an IPv4-translated', 6],
    ['64:ff9b::/96', 'a NAT64', 6],
    ['2002::/16', 'a 6to4', 1],
    ['::/96', 'an IPv4-compatible', 6],
  ] as const
).map(([cidr, form, at]) => [...ipaddr.IPv6.parseCIDR(cidr), form, at] as const);

const UNSPECIFIED_OR_LOOPBACK = ipaddr.IPv6.parseCIDR('::/127');

function parseAddress(address: string): V4 | V6 | undefined {
  // Zone ids (fe80::1%eth0) name an interface, not an address; ipaddr only accepts some spellings of them.
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIP(bare) === 0) return undefined;
  return ipaddr.parse(bare);
}

function embeddedV4(ip: V6): { form: string; v4: V4 } | undefined {
  if (ip.match(...UNSPECIFIED_OR_LOOPBACK)) return undefined;
  for (const [net, bits, form, at] of EMBEDDED_V4) {
    if (!ip.match(net, bits)) continue;
    const [hi, lo] = [ip.parts[at], ip.parts[at + 1]];
    return { form, v4: new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]) };
  }
  return undefined;
}

function labelV4(ip: V4): string | undefined {
  return V4_FORBIDDEN.find(([net, bits]) => ip.match(net, bits))?.[2];
}

function labelV6(ip: V6): string | undefined {
  const embedded = embeddedV4(ip);
  if (embedded) {
    const inner = labelV4(embedded.v4);
    return inner && `${embedded.form} form of ${embedded.v4.toString()}, ${inner}`;
  }
  const hit = V6_FORBIDDEN.find(([net, bits]) => ip.match(net, bits));
  if (hit) return hit[2];
  return ip.match(...GLOBAL_UNICAST) ? undefined : 'a reserved address (not global unicast)';
}

// Why an IP address must not be fetched, for a model to read; undefined when it is a public unicast address.
function forbiddenLabel(address: string): string | undefined {
  const ip = parseAddress(address);
  if (!ip) return 'not a valid IP address';
  return ip.kind() === 'ipv4' ? labelV4(ip as V4) : labelV6(ip as V6);
}

export function classifyAddress(address: string): AddressVerdict {
  const label = forbiddenLabel(address);
  return label ? { allowed: false, reason: `${address} is ${label}` } : { allowed: true };
}

export function isMetadataAddress(address: string): boolean {
  const ip = parseAddress(address);
  if (!ip) return false;
  const v4 = ip.kind() === 'ipv6' ? (embeddedV4(ip as V6)?.v4 ?? ip) : ip;
  return METADATA.has(v4.toString());
}

// Names that only ever mean something inside the host or its network. The address check would catch most of
// them after DNS, but refusing the name says why plainly and does not depend on what the resolver answers.
const FORBIDDEN_SUFFIXES: ReadonlyArray<readonly [string, string]> = [
  ['localhost', 'a loopback name'],
  // ICANN reserved .internal for private use (2024); metadata.google.internal and *.ec2.internal live there.
  ['internal', 'a private-network name (.internal is reserved for internal services, e.g. cloud metadata)'],
  ['local', 'a link-local multicast DNS name'],
  ['localdomain', 'a local-host name'],
  ['home.arpa', 'a home-network name'],
];

export function classifyHostname(hostname: string): AddressVerdict {
  let name: string;
  try {
    // Canonicalise as a URL would, so "127.1" or "0x7f.1" is judged as the address it stands for.
    name = new URL(`http://${hostname}/`).hostname.replace(/\.+$/, '');
  } catch {
    return { allowed: false, reason: `${hostname} is not a valid host name` };
  }
  const literal = name.replace(/^\[|\]$/g, '');
  if (isIP(literal) !== 0) return classifyAddress(literal);
  if (name === '') return { allowed: false, reason: 'the host name is empty' };
  for (const [suffix, label] of FORBIDDEN_SUFFIXES) {
    if (name === suffix || name.endsWith(`.${suffix}`)) return { allowed: false, reason: `${name} is ${label}` };
  }
  // A single label ("metadata", "redis") is completed by the resolver's search domains into an internal name.
  if (!name.includes('.')) {
    return { allowed: false, reason: `${name} is a single-label name, which resolves only inside the local network` };
  }
  return { allowed: true };
}

interface AllowEntry {
  host: string;
  port?: number;
}

function parseAllowEntry(entry: string): AllowEntry {
  const trimmed = entry.trim();
  const bracketed = /^(\[[^\]]+\])(?::(\d+))?$/.exec(trimmed);
  const hostPort = /^([^:]+)(?::(\d+))?$/.exec(trimmed);
  let host: string | undefined;
  let port: string | undefined;
  if (bracketed) [, host, port] = bracketed;
  else if (hostPort) [, host, port] = hostPort;
  else if (isIP(trimmed) === 6) host = `[${trimmed}]`;
  if (host === undefined || (port !== undefined && Number(port) > 65535)) {
    throw new Error(`invalid allowHosts entry "${entry}": expected host, host:port or [ipv6]:port`);
  }
  // Let the URL parser canonicalise the host, so the entry compares equal to what a request URL produces.
  let canonical: string;
  try {
    canonical = new URL(`http://${host}/`).hostname;
  } catch {
    throw new Error(`invalid allowHosts entry "${entry}": not a valid host`);
  }
  return { host: canonical.replace(/\.+$/, ''), port: port === undefined ? undefined : Number(port) };
}

// The operator's allow-list opens a host as the URL names it (name or literal), never an address that some
// other name happens to resolve to: otherwise any public name pointed at an allowed address would get through.
export class AddressPolicy {
  private readonly entries: AllowEntry[];

  constructor(allowHosts: readonly string[]) {
    this.entries = allowHosts.map(parseAllowEntry);
  }

  isOpened(hostname: string, port: number): boolean {
    const host = hostname.toLowerCase().replace(/\.+$/, '');
    return this.entries.some((e) => e.host === host && (e.port === undefined || e.port === port));
  }

  // Before any DNS: the host as written in the URL (WHATWG hostname, IPv6 in brackets).
  checkHost(hostname: string, port: number): AddressVerdict {
    if (this.isOpened(hostname, port)) return { allowed: true };
    return classifyHostname(hostname);
  }

  // Each DNS answer for the host, and the peer address of the socket once connected.
  checkResolved(hostname: string, port: number, address: string): AddressVerdict {
    const literal = isIP(hostname.replace(/^\[|\]$/g, '')) !== 0;
    if (this.isOpened(hostname, port)) {
      // An opened name still never reaches a metadata service through a DNS answer; only a literal entry can.
      if (!literal && isMetadataAddress(address)) {
        return { allowed: false, reason: `${hostname} resolves to ${address}, a cloud metadata address` };
      }
      return { allowed: true };
    }
    const label = forbiddenLabel(address);
    if (!label) return { allowed: true };
    const reason = literal ? `${address} is ${label}` : `${hostname} resolves to ${address}, ${label}`;
    return { allowed: false, reason };
  }
}
