import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AppError } from '../common/errors/app-error.js';
import { clientOf } from '../common/http/client-address.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import { rateLimited } from './rate-limit.errors.js';

// The clients held at once; past it, the one whose window began first is forgotten.
const MAX_CLIENTS = 50_000;

interface Client {
  failures: number;
  windowEnds: number;
}

// Requests refused for their credentials (401), counted per client address on this instance: past
// RATE_LIMIT_AUTH_FAILURES in a window, the address's requests that carry no key this instance knows are
// answered 429 from their headers until the window ends (EarlyRefusals), without a database lookup, Nest's
// pipeline or an access-log line each.
//
// A flood of small requests with made-up keys (a new prefix each, so each cost a query) took another tenant
// to 7% of its calls and its p99 to 11x in the noisy-neighbour bench. Counted per instance, not in the shared
// store: what is protected is this instance's event loop, and a failure must not cost a round trip to Redis.
// Tenants' clients behind one address with the outsider keep working: a key this instance has seen pass is
// let through (its requests are charged to its tenant as ever); only a key not yet seen here waits for the window.
@Injectable()
export class FailedAuthentications {
  private readonly logger = new Logger(FailedAuthentications.name);
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly clients = new Map<string, Client>();
  // When the last window of a limited client ends: until then some client may be refused (a check per request).
  private limitedUntil = 0;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.limit = config.rateLimit.authFailures;
    this.windowMs = config.rateLimit.windowMs;
  }

  // A request from `remote` (the socket's address) was refused 401.
  record(remote: string | undefined): void {
    if (this.limit === 0) return;
    const key = clientOf(remote);
    const now = Date.now();
    let client = this.clients.get(key);
    if (client === undefined || client.windowEnds <= now) {
      // Re-inserted at each new window, so the map's first entry is the one whose window began first.
      this.clients.delete(key);
      if (this.clients.size >= MAX_CLIENTS) this.clients.delete(this.clients.keys().next().value!);
      client = { failures: 0, windowEnds: now + this.windowMs };
      this.clients.set(key, client);
    }
    client.failures++;
    if (client.failures !== this.limit) return;
    this.limitedUntil = Math.max(this.limitedUntil, client.windowEnds);
    // Once per client and window: the refusals that follow are counted in /metrics, not logged one by one.
    this.logger.warn(
      `${key} had ${this.limit} requests refused for their credentials within ${Math.round(this.windowMs / 1000)} s (RATE_LIMIT_AUTH_FAILURES): its requests without a key known here are refused until ${new Date(client.windowEnds).toISOString()}`,
    );
  }

  // Whether some client may be limited now: false on nearly every request, without a lookup.
  someLimited(): boolean {
    return this.limitedUntil > Date.now();
  }

  // The 429 for a request from `remote` while it is past its failures (counted as answered); else null.
  refusal(remote: string | undefined): AppError | null {
    if (!this.someLimited()) return null;
    const client = this.clients.get(clientOf(remote));
    const inMs = client === undefined ? 0 : client.windowEnds - Date.now();
    if (client === undefined || client.failures < this.limit || inMs <= 0) return null;
    this.metrics.rateLimited('failed-authentication');
    const windowS = Math.round(this.windowMs / 1000);
    return rateLimited('requests refused for their credentials', this.limit, windowS, Math.max(1, Math.ceil(inMs / 1000)), 'this address');
  }
}
