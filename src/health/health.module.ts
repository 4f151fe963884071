import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { HealthController } from './health.controller.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';

@Module({ imports: [AuditModule, RateLimitModule], controllers: [HealthController] })
export class HealthModule {}
