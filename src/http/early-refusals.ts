import type { AppError } from '../common/errors/app-error.js';
import { errorAnswer, mapAppError } from '../common/errors/error-answer.js';
import { requestPath } from '../common/format/request-path.js';
import { CLIENT_METADATA_PATH } from '../connections/mcp-auth-discovery.js';
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
}

// The refusal for a request to a tenant route decided from its headers alone; null: go on (read its body).
// A large body (declared, or chunked) is read only for a request its key lets through. Outside MCP
// endpoints only a valid key passes the guard (no key or a wrong one: 401). At an MCP endpoint another
// issuer's token may be valid, and the guard's 401 names where a client signs in (RFC 9728): a bad token
// there is left to the guard. A tenant whose requests window is spent is refused here everywhere.
export async function earlyRefusal(
  method: string | undefined,
  url: string | undefined,
  headers: Record<string, string | string[] | undefined>,
  sources: EarlyRefusalSources,
): Promise<AppError | null> {
  if (method === 'OPTIONS') return null;
  const length = Number(headers['content-length']);
  const largeBody = headers['transfer-encoding'] !== undefined || length > EARLY_BODY_BYTES;
  // A request of any size is refused here only while some tenant's window is spent (else no key is looked
  // up twice): past its limit, a tenant's flood of small requests is answered without Nest's pipeline, and
  // each answer closes the connection it came on.
  if (!largeBody && !sources.someRefused()) return null;
  const path = requestPath(url ?? '/');
  if (!path.startsWith('/v1/') || path.startsWith('/v1/admin/') || path.startsWith('/v1/connections/callback')) return null;
  if (path === CLIENT_METADATA_PATH) return null;
  const mcp = path.endsWith('/mcp');
  const token = bearerToken(headers.authorization);
  if (token === null) return mcp || !largeBody ? null : missingCredentials();
  const tenantId = await sources.keyTenant(token);
  if (tenantId === undefined) return null;
  if (tenantId === null) return mcp || !largeBody ? null : invalidCredentials();
  return sources.requestsRefused(tenantId);
}

// From the application's own parts: its keys (cached) and its rate limiter. The admin token and an expired
// key are left to the guard, which says which they are.
export function earlyRefusalSources(apiKeys: ApiKeysService, limiter: TenantRateLimiter, adminToken: string | null): EarlyRefusalSources {
  return {
    async keyTenant(token) {
      if (token === adminToken) return undefined;
      const found = await apiKeys.authenticate(token, hashApiKey(token));
      if (found === null) return null;
      return 'expiredAt' in found ? undefined : found.tenantId;
    },
    requestsRefused: (tenantId) => limiter.requestsRefused(tenantId),
    someRefused: () => limiter.someRequestsRefused(),
  };
}

// Answers a refusal in the one error shape and closes the connection once it is written: the body the
// client is still sending is never read.
export function refusalAnswer(refusal: AppError, requestId?: string): { status: number; headers: Record<string, string>; body: string } {
  const answer = errorAnswer(mapAppError(refusal), requestId);
  const body = JSON.stringify(answer.body);
  return {
    status: answer.status,
    headers: {
      ...answer.headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
    },
    body,
  };
}
