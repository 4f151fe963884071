import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { badRequest } from '../../common/errors/app-error.js';
import { AddressPolicy } from './address-policy.js';
import { displayRawUrl, displayUrl } from './fetch-errors.js';
import { urlBlocked } from './redirect-policy.js';
import { assertUrlAllowed, portOf, type Resolver } from './safe-fetch.js';

export interface EndpointCheckPolicy {
  allowHosts: readonly string[];
  lookup?: Resolver;
  // How long the resolver may take before the name is let through to the call-time checks.
  resolveTimeoutMs?: number;
}

export type EndpointVerdict = 'allowed' | 'unresolved';

const RESOLVE_TIMEOUT_MS = 3000;

const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family }));

// An endpoint a tenant registers (an http skill's URL, an MCP server's) judged now by the rules safeFetch
// applies on every call: the host as written, then each address its name resolves to at this moment, so
// 127.0.0.1, [::1], the metadata service or a name that points at them is refused at registration with the
// same url_blocked the call would get. A name that does not resolve (yet) is let through ('unresolved'):
// nothing can be reached through it now, and every call judges the addresses it resolves to then (a name
// can also be repointed after registration, which is why the check at call time is the one that counts).
export async function checkEndpoint(rawUrl: string, policy: EndpointCheckPolicy): Promise<EndpointVerdict> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw badRequest('invalid_url', `${displayRawUrl(rawUrl)} is not a valid absolute URL`, { url: displayRawUrl(rawUrl) });
  }
  const addresses = new AddressPolicy(policy.allowHosts);
  assertUrlAllowed(url, addresses);
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const port = portOf(url);
  // A literal address was judged above; a name is judged by its answers (one the operator opened passes,
  // unless it points at a metadata service).
  if (isIP(hostname) !== 0) return 'allowed';
  const answers = await resolveWithin(policy.lookup ?? systemResolver, hostname, policy.resolveTimeoutMs ?? RESOLVE_TIMEOUT_MS);
  if (answers === null) return 'unresolved';
  for (const { address } of answers) {
    const verdict = addresses.checkResolved(url.hostname, port, address);
    if (!verdict.allowed) throw urlBlocked(displayUrl(url), verdict.reason ?? 'the address is not allowed');
  }
  return 'allowed';
}

async function resolveWithin(resolve: Resolver, hostname: string, timeoutMs: number) {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      resolve(hostname),
      new Promise<null>((done) => {
        timer = setTimeout(() => done(null), timeoutMs);
        timer.unref();
      }),
    ]);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}
