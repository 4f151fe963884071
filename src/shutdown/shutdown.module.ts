import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { GracefulShutdown } from './graceful-shutdown.js';

@Module({ imports: [ToolsModule, AuditModule], providers: [GracefulShutdown] })
export class ShutdownModule {}
