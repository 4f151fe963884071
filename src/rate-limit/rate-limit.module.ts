import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { MemoryRateLimitStore } from './rate-limit.store.js';
import { RATE_LIMIT_STORE } from './rate-limit.tokens.js';
import { TenantRateLimitGuard } from './tenant-rate-limit.guard.js';
import { TenantRateLimiter } from './tenant-rate-limiter.js';
import { FailedAuthentications } from './failed-authentications.js';

@Module({
  providers: [
    {
      provide: RATE_LIMIT_STORE,
      inject: [APP_CONFIG],
      // The Redis client (ioredis, a few megabytes) is loaded only where REDIS_URL asks for it.
      useFactory: async (config: AppConfig) => {
        if (!config.rateLimit.redisUrl) return new MemoryRateLimitStore();
        const { RedisRateLimitStore } = await import('./redis-rate-limit.store.js');
        return new RedisRateLimitStore(config.rateLimit.redisUrl);
      },
    },
    TenantRateLimiter,
    TenantRateLimitGuard,
    FailedAuthentications,
  ],
  // The guard is installed globally by AppModule, after AuthGuard; the limiter is charged by the tool-call path;
  // AuthGuard counts its 401s in FailedAuthentications.
  exports: [TenantRateLimitGuard, TenantRateLimiter, FailedAuthentications],
})
export class RateLimitModule {}
