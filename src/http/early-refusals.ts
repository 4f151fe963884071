import type { AppError } from '../common/errors/app-error.js';
import { errorAnswer, mapAppError } from '../common/errors/error-answer.js';
import { requestPath } from '../common/format/request-path.js';
import { CLIENT_METADATA_PATH } from '../connections/mcp-auth-discovery.js';
import type { FailedAuthentications } from '../rate-limit/failed-authentications.js';
import type { TenantRateLimiter } from '../rate-limit/tenant-rate-limiter.js';
import { bearerToken, hashApiKey } from '../tenants/api-key-format.js';
import type { ApiKeysService } from '../tenants/api-keys.service.js';
import { invalidCredentials, missingCredentials } from '../tenants/tenants.errors.js';

// Bodies larger than this are read only for a request its key lets through. Body parsers run before Nest's
// guards, so a request that was going to be refused (a made-up key, a tenant past its requests limit) had
// its body read, checked as UTF-8 and parsed first: an outsider posting 1 MB bodies with a made-up key, or
// a tenant posting them past its limit, held the event loop, and another tenant's p99 went 117-138x.
export const EARLY_BODY_BYTES = 64 * 1024;

export interface EarlyRefusalSources {
  // The tenant a key names: null when no valid key (or token Toolgate issued) has that form and secret;
  // undefined for what the guard answers otherwise (the admin token, an expired key).
  keyTenant(token: string): Promise<string | null | undefined>;
  // The 429 the tenant's next request would get, while its requests' window is known to be spent.
  requestsRefused(tenantId: string): AppError | null;
  // Whether any tenant's requests window is known to be spent now.
  someRefused(): boolean;
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

// The refusal for a request to a tenant route decided from its headers alone; null: go on (read its body).
// A large body (declared, or chunked) is read only for a request its key lets through. Outside MCP
// endpoints only a valid key passes the guard (no key or a wrong one: 401). At an MCP endpoint another
// issuer's token may be valid, and the guard's 401 names where a client signs in (RFC 9728): a bad token
// there is left to the guard. A tenant whose requests window is spent is refused here everywhere, and so
// is a request from an address past its failed authentications unless it carries a token known here (any
// /v1 route, the admin's included: guesses at the admin token count too).
export async function earlyRefusal(
  method: string | undefined,
  url: string | undefined,
  headers: Record<string, string | string[] | undefined>,
  address: string | undefined,
  sources: EarlyRefusalSources,
): Promise<EarlyRefusal | null> {
  if (method === 'OPTIONS') return null;
  const length = Number(headers['content-length']);
  const largeBody = headers['transfer-encoding'] !== undefined || length > EARLY_BODY_BYTES;
  const addressesRefused = sources.someAddressRefused();
  // A request of any size is refused here only while some tenant's window is spent or some address is
  // refused (else no key is looked up twice): such floods of small requests are answered without Nest's pipeline.
  if (!largeBody && !sources.someRefused() && !addressesRefused) return null;
  const path = requestPath(url ?? '/');
  if (!path.startsWith('/v1/') || path.startsWith('/v1/connections/callback') || path === CLIENT_METADATA_PATH) return null;
  const token = bearerToken(headers.authorization);
  if (addressesRefused && (token === null || !sources.knownToken(token))) {
    const error = sources.addressRefused(address);
    if (error) return { error, forAddress: true };
  }
  if (path.startsWith('/v1/admin/')) return null;
  const mcp = path.endsWith('/mcp');
  const refused = (error: AppError | null) => (error === null ? null : { error, forAddress: false });
  if (token === null) return mcp || !largeBody ? null : (sources.failed(address), refused(missingCredentials()));
  const tenantId = await sources.keyTenant(token);
  if (tenantId === undefined) return null;
  if (tenantId === null) return mcp || !largeBody ? null : (sources.failed(address), refused(invalidCredentials()));
  return refused(sources.requestsRefused(tenantId));
}

// From the application's own parts: its keys (cached), its rate limiter and the failures per address. The
// admin token and an expired key are left to the guard, which says which they are.
export function earlyRefusalSources(
  apiKeys: ApiKeysService,
  limiter: TenantRateLimiter,
  failures: FailedAuthentications,
  adminToken: string | null,
): EarlyRefusalSources {
  return {
    async keyTenant(token) {
      if (token === adminToken) return undefined;
      const found = await apiKeys.authenticate(token, hashApiKey(token));
      if (found === null) return null;
      return 'expiredAt' in found ? undefined : found.tenantId;
    },
    requestsRefused: (tenantId) => limiter.requestsRefused(tenantId),
    someRefused: () => limiter.someRequestsRefused(),
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
