import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { HealthController } from './health.controller.js';

@Module({ imports: [AuditModule], controllers: [HealthController] })
export class HealthModule {}
