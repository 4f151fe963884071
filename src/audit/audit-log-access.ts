import { Injectable } from '@nestjs/common';
import type { KeyRole } from '../common/auth/key-roles.js';
import { ProjectAccess } from '../projects/project-access.js';
import { AuditRepository } from './audit.repository.js';
import { AuditWriter } from './audit-writer.js';

// Who may read a project's invocation log. Its own project's keys, as long as the project exists; once it
// is deleted, the rows stay (they outlive it until retention drops them) and the tenant's admin keys still
// read and export them at the same routes. Anyone else gets the 404 of a missing project.
@Injectable()
export class AuditLogAccess {
  constructor(
    private readonly projects: ProjectAccess,
    private readonly repository: AuditRepository,
    private readonly writer: AuditWriter,
  ) {}

  async assertReadable(tenantId: string, projectId: string, role: KeyRole): Promise<void> {
    try {
      await this.projects.assertOwned(tenantId, projectId);
    } catch (error) {
      if (role !== 'admin') throw error;
      // Rows still queued in this process are written first: the last call of a just-deleted project counts.
      await this.writer.drain();
      if (!(await this.repository.projectHasRows(tenantId, projectId))) throw error;
    }
  }
}
