import type { AppError } from '../common/errors/app-error.js';
import { errorAnswer, mapAppError } from '../common/errors/error-answer.js';
import { requestPath } from '../common/format/request-path.js';
import { callCost, type LoopShare } from '../common/scheduling/loop-share.js';
import { CLIENT_METADATA_PATH } from '../connections/mcp-auth-discovery.js';
import { isConsolePath } from './console-static.js';
import { isDocsPath } from './docs-headers.js';
import type { FailedAuthentications } from '../rate-limit/failed-authentications.js';
import type { TenantRateLimiter } from '../rate-limit/tenant-rate-limiter.js';
import { bearerToken, hashApiKey } from '../tenants/api-key-format.js';
import type { ApiKeysService } from '../tenants/api-keys.service.js';
import { type KeyCheck, keepKeyCheck } from '../tenants/key-checks.js';
import { invalidCredentials, missingCredentials } from '../tenants/tenants.errors.js';

// The share of the event loop (LoopShare) that requests without a known key take their turns in.
const UNAUTHENTICATED = '(requests without a known key)';
// What a public document's answer is charged, whichever it is: about the size of the largest (the OpenAPI
// document, and the docs page's script that holds it).
const DOCUMENT_BYTES = 256 * 1024;

export interface EarlyRefusalSources {
  isAdminToken(token: string): boolean;
  // Whether checking the key would query the database (a prefix this instance has not seen, from a key that
  // has not passed here lately): made-up keys of new prefixes are such keys.
  unseenKey(token: string): boolean;
  // The key looked up (cached, or a query); `unseen` ones in the turns of requests without a known key.
  check(token: string, unseen: boolean): Promise<KeyCheck>;
  // A turn in the event loop's share of `tenantId`, or with null in the one share of requests without a
  // known key (whatever their address), charged as an answer of `bytes`; taken before the request goes on.
  turn(tenantId: string | null, bytes?: number): Promise<void>;
  // The 429 the tenant's next request would get, while its requests' window is known to be spent.
  requestsRefused(tenantId: string): AppError | null;
  // The 429 for a request from a client address past RATE_LIMIT_AUTH_FAILURES (FailedAuthentications).
  addressRefused(address: string | undefined): AppError | null;
  someAddressRefused(): boolean;
  // Whether a token is one to let on to the guard from such an address: the admin token, a key that passed lately.
  knownToken(token: string): boolean;
  // A 401 answered here counts against its address as the guard's do.
  failed(address: string | undefined): void;
}

// How long a request from an address refused for its failed authentications waits for its 429. A flood's
// client makes a request per connection per this, at most (and HTTP_MAX_CONNECTIONS_PER_ADDRESS connections):
// answered at once, 16 clients looping 429s took 930 a second, and another tenant's steady calls 5x longer.
export const ADDRESS_REFUSAL_DELAY_MS = 1_000;

export interface EarlyRefusal {
  error: AppError;
  // Refused for its address's failed authentications: counted in /metrics, with no access-log line each (a
  // flood of them would otherwise write one line per request), and answered after ADDRESS_REFUSAL_DELAY_MS.
  forAddress: boolean;
}

// The refusal of a request to a tenant or admin route (under /v1), decided from its headers alone, before
// its body is read or Nest's pipeline runs; null: go on. Body parsers run before Nest's guards, so a request
// that was going to be refused had its body read, checked as UTF-8 and parsed first: an outsider posting 1 MB
// bodies with a made-up key, or a tenant posting them past its limit, took another tenant's p99 117-138x; and
// each 401 through the pipeline cost the event loop more than its answer. `request` is the object the guard
// will see: the key checked here is kept on it for the guard (keepKeyCheck), which does not look it up again.
// Every request that needs no key (outside /v1 or a public route there), but the operator's probes, takes a
// turn in the share of requests without a known key, and goes on: the console, /docs and /openapi.json, the
// OAuth server's endpoints and documents, and paths that answer 404. 16 clients registering clients of 20 KB
// from a new address every 30 requests (RATE_LIMIT_SIGN_IN is per address) made 200 a second and took
// another tenant's median read_file from 4 ms to 256 ms before they took turns. Then, under /v1:
// - From an address past its failed authentications, without a token known here: 429, a second later.
// - No valid key (none, or no such key): 401 here, after a turn in the share of requests without a known
//   key, so that a flood of them from however many addresses takes at most that share of the event loop. At
//   an MCP endpoint the turn is taken and the 401 left to the guard, which names where a client signs in
//   (RFC 9728) and may accept another issuer's token.
// - A tenant whose requests window is spent: 429.
// The admin token, an expired key and a key on a route not its own are the guard's to answer.
export async function earlyRefusal(
  method: string | undefined,
  url: string | undefined,
  headers: Record<string, string | string[] | undefined>,
  address: string | undefined,
  request: object,
  sources: EarlyRefusalSources,
): Promise<EarlyRefusal | null> {
  if (method === 'OPTIONS') return null;
  const path = requestPath(url ?? '/');
  if (isOperatorProbe(path)) return null;
  if (!path.startsWith('/v1/') || isPublicV1Path(path)) {
    await sources.turn(null, isDocsPath(url) || isConsolePath(url) ? DOCUMENT_BYTES : declaredBodyBytes(headers));
    return null;
  }
  const token = bearerToken(headers.authorization);
  if (sources.someAddressRefused() && (token === null || !sources.knownToken(token))) {
    const error = sources.addressRefused(address);
    if (error) return { error, forAddress: true };
  }
  if (token !== null && sources.isAdminToken(token)) return null;
  const unseen = token !== null && sources.unseenKey(token);
  const found = token === null ? null : await sources.check(token, unseen);
  if (token !== null) keepKeyCheck(request, token, found);
  if (found === null) {
    if (!unseen) await sources.turn(null);
    if (path.endsWith('/mcp')) return null;
    sources.failed(address);
    return { error: token === null ? missingCredentials() : invalidCredentials(), forAddress: false };
  }
  if ('expiredAt' in found) return null;
  const refusal = sources.requestsRefused(found.tenantId);
  if (refusal === null) return null;
  // Answered in the tenant's own turn: its flood of requests past its limit is its share's to pay for.
  await sources.turn(found.tenantId);
  return { error: refusal, forAddress: false };
}

// The probes an operator's systems call, never held: health checks must answer however busy the loop is,
// and /metrics has a token of its own.
function isOperatorProbe(path: string): boolean {
  return path === '/metrics' || path === '/health' || path.startsWith('/health/');
}

// The routes under /v1 that take no key: a connection's callback, and the client document this service shows
// upstream servers.
function isPublicV1Path(path: string): boolean {
  return path.startsWith('/v1/connections/callback') || path === CLIENT_METADATA_PATH;
}

// The body a request says it carries (what its turn is charged as; the body parser's limit still holds it).
function declaredBodyBytes(headers: Record<string, string | string[] | undefined>): number {
  const declared = Number(headers['content-length']);
  return Number.isSafeInteger(declared) && declared > 0 ? declared : 0;
}

// From the application's own parts: its keys (cached), its rate limiter, the failures per address and the
// share of the event loop.
export function earlyRefusalSources(
  apiKeys: ApiKeysService,
  limiter: TenantRateLimiter,
  failures: FailedAuthentications,
  share: LoopShare,
  adminToken: string | null,
): EarlyRefusalSources {
  // All requests without a known key share one part of the event loop, as one tenant would: made-up keys
  // of new prefixes (each a query, on the event loop itself with PGlite) and requests with no key, from
  // however many addresses, wait for their turns there instead of taking the turns of tenants with keys.
  // A turn with nothing to look up lasts until the loop's next turn: answering the request comes after it,
  // so a turn that ended at once would let every waiting request go in the same instant (one at a time, each
  // over before the next began), and 200 connections' 401s took another tenant's p99 from 15 ms to 2.6 s.
  const nextLoopTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  return {
    isAdminToken: (token) => token === adminToken,
    unseenKey: (token) => apiKeys.wouldQuery(token) && !apiKeys.passedLately(token),
    check(token, unseen) {
      const lookUp = () => apiKeys.authenticate(token, hashApiKey(token));
      return unseen ? share.run(UNAUTHENTICATED, lookUp, () => callCost(0)) : lookUp();
    },
    turn: (tenantId, bytes = 0) => share.run(tenantId ?? UNAUTHENTICATED, nextLoopTurn, () => callCost(bytes)),
    requestsRefused: (tenantId) => limiter.requestsRefused(tenantId),
    addressRefused: (address) => failures.refusal(address),
    someAddressRefused: () => failures.someLimited(),
    knownToken: (token) => token === adminToken || apiKeys.passedLately(token),
    failed: (address) => failures.record(address),
  };
}

// Answers a refusal in the one error shape. A request that may carry a body (declared, or chunked) has its
// connection closed once the answer is written: the body the client is still sending is never read. One
// without keeps its connection, as any answer does: a flood's client would otherwise cost a new connection
// accepted per refusal.
export function refusalAnswer(
  refusal: AppError,
  headers: Record<string, string | string[] | undefined>,
  requestId?: string,
): { status: number; headers: Record<string, string>; body: string } {
  const answer = errorAnswer(mapAppError(refusal), requestId);
  const body = JSON.stringify(answer.body);
  const bodyless = headers['transfer-encoding'] === undefined && (headers['content-length'] ?? '0') === '0';
  return {
    status: answer.status,
    headers: {
      ...answer.headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      ...(bodyless ? {} : { connection: 'close' }),
    },
    body,
  };
}
