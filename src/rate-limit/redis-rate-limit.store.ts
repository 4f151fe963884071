import { Redis } from 'ioredis';
import type { RateLimitHit, RateLimitStore } from './rate-limit.store.js';

// One round trip: count the hits and start the window with the first.
const HIT = `
local hits = redis.call('INCRBY', KEYS[1], ARGV[2])
if hits == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {hits, redis.call('PTTL', KEYS[1])}
`;

export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix = 'toolgate:rate:',
  ) {
    // No offline queue and no retries per command: while Redis is down a hit fails at once, and the limiter
    // answers 503 (or lets the request pass) instead of a request hanging on a queue. The client reconnects
    // by itself in the background.
    this.redis = new Redis(url, { maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 1000 });
    this.redis.on('error', () => undefined);
  }

  // For readiness: whether Redis answers a PING now.
  async healthy(timeoutMs: number): Promise<boolean> {
    try {
      return (await withTimeout(this.redis.ping(), timeoutMs)) === 'PONG';
    } catch {
      return false;
    }
  }

  async hit(key: string, windowMs: number, count = 1, timeoutMs = 1000): Promise<RateLimitHit> {
    const [hits, ttl] = (await withTimeout(this.redis.eval(HIT, 1, `${this.prefix}${key}`, windowMs, count), timeoutMs)) as [
      number,
      number,
    ];
    return { hits, resetInMs: ttl > 0 ? ttl : windowMs };
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
