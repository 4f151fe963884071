import { Module } from '@nestjs/common';
import { ProjectsModule } from '../projects/projects.module.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';
import { InvocationsController } from './invocations.controller.js';
import { InvocationsService } from './invocations.service.js';

@Module({
  imports: [ProjectsModule],
  controllers: [InvocationsController],
  providers: [AuditRepository, AuditService, InvocationsService],
  exports: [AuditService],
})
export class AuditModule {}
