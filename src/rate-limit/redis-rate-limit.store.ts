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

  constructor(url: string, private readonly prefix = 'toolgate:rate:') {
    this.redis = new Redis(url, { maxRetriesPerRequest: 2 });
    // Connection errors surface on the commands; the client reconnects by itself.
    this.redis.on('error', () => undefined);
  }

  async hit(key: string, windowMs: number, count = 1): Promise<RateLimitHit> {
    const [hits, ttl] = (await this.redis.eval(HIT, 1, `${this.prefix}${key}`, windowMs, count)) as [number, number];
    return { hits, resetInMs: ttl > 0 ? ttl : windowMs };
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
