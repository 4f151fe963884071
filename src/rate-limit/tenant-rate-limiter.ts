import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import type { AppError } from '../common/errors/app-error.js';
import { rateLimited, rateLimitStoreUnavailable } from './rate-limit.errors.js';
import { RATE_LIMIT_STORE, type RateLimitStore } from './rate-limit.tokens.js';

interface Bucket {
  name: 'requests' | 'commands' | 'sign-in';
  limit: number;
  // What is counted, and whose count it is, for the 429's message.
  what: string;
  whose: string;
}

// Limits are per tenant, not per IP: agents of many tenants share egress addresses, and one tenant's
// burst must not throttle another. Every tenant request counts in `requests` (TenantRateLimitGuard);
// a tool call that spawns a process also counts in the tighter `commands`, charged by the tool-call path
// once it knows the tool, whichever channel (REST or MCP) the call came through. The OAuth sign-in routes
// have no tenant yet (a client registering itself, a browser sent to authorize): they count per client
// address in `sign-in`, so nobody can fill the client table or the request table from one machine. Token
// requests (each exchange or refresh writes an access token and a refresh token) count per address too,
// with the same figure but a count of their own: a hosted client refreshing for many people from one
// address does not use up what its registrations and their authorization requests may take.
@Injectable()
export class TenantRateLimiter implements OnApplicationShutdown {
  private readonly requests: Bucket;
  private readonly commands: Bucket;
  private readonly signIn: Bucket;
  private readonly tokens: Bucket;
  private readonly windowMs: number;
  private readonly onStoreError: 'deny' | 'allow';
  private readonly storeTimeoutMs: number;
  // Tenants whose requests were refused, until their window resets (this instance's view): their next
  // requests are refused before their bodies are read (http/early-refusals.ts).
  private readonly refusedUntil = new Map<string, number>();

  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.requests = { name: 'requests', limit: config.rateLimit.requests, what: 'requests', whose: 'this tenant' };
    this.commands = { name: 'commands', limit: config.rateLimit.commandCalls, what: 'command calls', whose: 'this tenant' };
    this.signIn = {
      name: 'sign-in',
      limit: config.rateLimit.signIn,
      what: 'OAuth registrations and authorization requests',
      whose: 'this address',
    };
    // Named `sign-in` too (its refusals count under that label), its counters kept apart by their key.
    this.tokens = { name: 'sign-in', limit: config.rateLimit.signIn, what: 'OAuth token requests', whose: 'this address' };
    this.windowMs = config.rateLimit.windowMs;
    this.onStoreError = config.rateLimit.onStoreError;
    this.storeTimeoutMs = config.rateLimit.storeTimeoutMs;
  }

  // Throws 429 rate_limited with Retry-After once the tenant is over the limit.
  chargeRequest(tenantId: string): Promise<void> {
    return this.charge(this.requests, tenantId);
  }

  // The calls a request carries beyond the one its own charge covered (a REST batch of 32 calls, an MCP
  // JSON-RPC batch): a batch costs what its calls would cost one by one. Refused whole, before any runs.
  chargeExtraCalls(tenantId: string, extra: number): Promise<void> {
    return extra > 0 ? this.charge(this.requests, tenantId, extra) : Promise.resolve();
  }

  // The 429 a tenant's next request would get, while its requests' window is known to be spent; else null.
  requestsRefused(tenantId: string): AppError | null {
    const until = this.refusedUntil.get(tenantId);
    if (until === undefined) return null;
    const inMs = until - Date.now();
    if (inMs <= 0) {
      this.refusedUntil.delete(tenantId);
      return null;
    }
    const bucket = this.requests;
    // Counted as every refusal is, whichever path answers it.
    this.metrics.rateLimited(bucket.name);
    return rateLimited(bucket.what, bucket.limit, Math.round(this.windowMs / 1000), Math.max(1, Math.ceil(inMs / 1000)), bucket.whose);
  }

  chargeCommand(tenantId: string): Promise<void> {
    return this.charge(this.commands, tenantId);
  }

  chargeSignIn(clientAddress: string): Promise<void> {
    return this.charge(this.signIn, clientAddress);
  }

  chargeTokenRequest(clientAddress: string): Promise<void> {
    return this.charge(this.tokens, `token:${clientAddress}`);
  }

  onApplicationShutdown(): Promise<void> {
    return this.store.close();
  }

  // Whether the counters' store answers (readiness reports it).
  storeHealthy(): Promise<boolean> {
    return this.store.healthy(this.storeTimeoutMs);
  }

  private rememberRefused(tenantId: string, resetInMs: number): void {
    const now = Date.now();
    // Bounded by the tenants refused within one window; the ended ones go first when it grows.
    if (this.refusedUntil.size >= 10_000) for (const [id, until] of this.refusedUntil) if (until <= now) this.refusedUntil.delete(id);
    if (this.refusedUntil.size >= 10_000) return;
    this.refusedUntil.set(tenantId, now + resetInMs);
  }

  private async charge(bucket: Bucket, counterKey: string, count = 1): Promise<void> {
    let counted: { hits: number; resetInMs: number };
    try {
      counted = await this.store.hit(`${bucket.name}:${counterKey}`, this.windowMs, count, this.storeTimeoutMs);
    } catch {
      // The store is down or slow: never a hang or a 500. Refused with 503 and Retry-After, unless the
      // operator chose to let requests through uncounted (RATE_LIMIT_ON_STORE_ERROR=allow).
      this.metrics.rateLimitStoreFailed();
      if (this.onStoreError === 'allow') return;
      throw rateLimitStoreUnavailable(1);
    }
    const { hits, resetInMs } = counted;
    if (hits <= bucket.limit) return;
    this.metrics.rateLimited(bucket.name);
    if (bucket === this.requests && count === 1) this.rememberRefused(counterKey, resetInMs);
    const retryAfter = Math.max(1, Math.ceil(resetInMs / 1000));
    throw rateLimited(bucket.what, bucket.limit, Math.round(this.windowMs / 1000), retryAfter, bucket.whose);
  }
}
