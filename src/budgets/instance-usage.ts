import { Injectable } from '@nestjs/common';
import { AuditAllowance } from './audit-allowance.js';
import { CallAdmission } from './call-admission.js';
import type { InstanceCounted } from './tenant-usage.js';
import { UnreadAnswers } from './unread-answers.js';

// What each instance counts of a tenant for itself, in memory (the database counts the rest): read by the
// usage routes and the metrics alike.
@Injectable()
export class InstanceUsage {
  constructor(
    private readonly calls: CallAdmission,
    private readonly unread: UnreadAnswers,
    private readonly audit: AuditAllowance,
  ) {}

  of(tenantId: string): InstanceCounted {
    return {
      concurrentCalls: this.calls.inProgress(tenantId),
      unreadAnswerBytes: this.unread.bytes(tenantId),
      auditBytesPerDay: this.audit.keptToday(tenantId),
    };
  }
}
