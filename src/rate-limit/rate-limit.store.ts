// Counts hits per key in fixed windows. In memory for one instance; Redis (redis-rate-limit.store.ts)
// when several instances must share the counters.
export interface RateLimitHit {
  hits: number;
  // Milliseconds until the window resets.
  resetInMs: number;
}

export interface RateLimitStore {
  // Counts `count` hits at once (a batch of calls is charged as that many requests). Rejects when the store
  // cannot answer within `timeoutMs`.
  hit(key: string, windowMs: number, count?: number, timeoutMs?: number): Promise<RateLimitHit>;
  // For readiness: whether the store answers now (an in-memory store always does).
  healthy(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, { hits: number; resetAt: number }>();
  private sweeps = 0;

  constructor(private readonly now: () => number = Date.now) {}

  hit(key: string, windowMs: number, count = 1): Promise<RateLimitHit> {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { hits: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.hits += count;
    // Expired windows are dropped now and then, so idle tenants do not accumulate.
    if (++this.sweeps % 1000 === 0) for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
    return Promise.resolve({ hits: window.hits, resetInMs: window.resetAt - now });
  }

  healthy(): Promise<boolean> {
    return Promise.resolve(true);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
