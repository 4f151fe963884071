import { Module } from '@nestjs/common';
import { ProjectAccessModule } from '../projects/project-access.module.js';
import { AuditRepository } from './audit.repository.js';
import { AuditLogAccess } from './audit-log-access.js';
import { AuditService } from './audit.service.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { AuditWriter } from './audit-writer.js';
import { AuditPartitions } from './audit-partitions.js';
import { Metrics } from '../metrics/metrics.js';
import { InvocationsController } from './invocations.controller.js';
import { InvocationsService } from './invocations.service.js';
import { InvocationsExportService } from './invocations-export.service.js';
import { ParkedCallsRepository } from './parked-calls.repository.js';

@Module({
  imports: [ProjectAccessModule],
  controllers: [InvocationsController],
  providers: [
    AuditRepository,
    AuditLogAccess,
    AuditPartitions,
    {
      provide: AuditWriter,
      inject: [AuditRepository, APP_CONFIG, AuditPartitions, Metrics],
      useFactory: (repository: AuditRepository, config: AppConfig, partitions: AuditPartitions, metrics: Metrics) => {
        const writer = new AuditWriter(repository, config.audit, (startedAt) => partitions.cover(startedAt), {
          batchWritten: (rows) => metrics.auditBatchWritten(rows),
          writeFailed: () => metrics.auditWriteFailed(),
        });
        metrics.gauge('toolgate_audit_queue_rows', 'Audit rows waiting for the batched writer', () => writer.pending);
        return writer;
      },
    },
    AuditService,
    InvocationsService,
    InvocationsExportService,
    ParkedCallsRepository,
  ],
  exports: [AuditService, AuditWriter, AuditPartitions, ParkedCallsRepository],
})
export class AuditModule {}
