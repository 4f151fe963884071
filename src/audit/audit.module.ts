import { Module } from '@nestjs/common';
import { ProjectsModule } from '../projects/projects.module.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { AuditWriter } from './audit-writer.js';
import { AuditPartitions } from './audit-partitions.js';
import { InvocationsController } from './invocations.controller.js';
import { InvocationsService } from './invocations.service.js';
import { InvocationsExportService } from './invocations-export.service.js';
import { ParkedCallsRepository } from './parked-calls.repository.js';

@Module({
  imports: [ProjectsModule],
  controllers: [InvocationsController],
  providers: [
    AuditRepository,
    AuditPartitions,
    {
      provide: AuditWriter,
      inject: [AuditRepository, APP_CONFIG, AuditPartitions],
      useFactory: (repository: AuditRepository, config: AppConfig, partitions: AuditPartitions) =>
        new AuditWriter(repository, config.audit, (startedAt) => partitions.cover(startedAt)),
    },
    AuditService,
    InvocationsService,
    InvocationsExportService,
    ParkedCallsRepository,
  ],
  exports: [AuditService, AuditWriter, AuditPartitions, ParkedCallsRepository],
})
export class AuditModule {}
