import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { MemoryRateLimitStore } from './rate-limit.store.js';
import { RATE_LIMIT_STORE } from './rate-limit.tokens.js';
import { RedisRateLimitStore } from './redis-rate-limit.store.js';
import { TenantRateLimitGuard } from './tenant-rate-limit.guard.js';
import { TenantRateLimiter } from './tenant-rate-limiter.js';

@Module({
  providers: [
    {
      provide: RATE_LIMIT_STORE,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        config.rateLimit.redisUrl ? new RedisRateLimitStore(config.rateLimit.redisUrl) : new MemoryRateLimitStore(),
    },
    TenantRateLimiter,
    TenantRateLimitGuard,
  ],
  // The guard is installed globally by AppModule, after AuthGuard; the limiter is charged by the tool-call path.
  exports: [TenantRateLimitGuard, TenantRateLimiter],
})
export class RateLimitModule {}
