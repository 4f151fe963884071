import { Module } from '@nestjs/common';
import { ProjectsModule } from '../projects/projects.module.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { AuditWriter } from './audit-writer.js';
import { InvocationsController } from './invocations.controller.js';
import { InvocationsService } from './invocations.service.js';
import { InvocationsExportService } from './invocations-export.service.js';

@Module({
  imports: [ProjectsModule],
  controllers: [InvocationsController],
  providers: [
    AuditRepository,
    {
      provide: AuditWriter,
      inject: [AuditRepository, APP_CONFIG],
      useFactory: (repository: AuditRepository, config: AppConfig) => new AuditWriter(repository, config.audit),
    },
    AuditService,
    InvocationsService,
    InvocationsExportService,
  ],
  exports: [AuditService, AuditWriter],
})
export class AuditModule {}
