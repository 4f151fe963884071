import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ToolsModule } from '../tools/tools.module.js';
import { MemoryRateLimitStore } from './rate-limit.store.js';
import { RATE_LIMIT_STORE } from './rate-limit.tokens.js';
import { RedisRateLimitStore } from './redis-rate-limit.store.js';
import { TenantRateLimitGuard } from './tenant-rate-limit.guard.js';

@Module({
  imports: [ToolsModule],
  providers: [
    {
      provide: RATE_LIMIT_STORE,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        config.rateLimit.redisUrl ? new RedisRateLimitStore(config.rateLimit.redisUrl) : new MemoryRateLimitStore(),
    },
    TenantRateLimitGuard,
  ],
  // Installed as a global guard by AppModule, after AuthGuard (it needs the tenant).
  exports: [TenantRateLimitGuard],
})
export class RateLimitModule {}
