import { Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { FairTurns } from '../common/scheduling/fair-turns.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { invalidExportWindow } from './audit.errors.js';
import { AuditLogAccess } from './audit-log-access.js';
import { AuditRepository, type ExportedInvocationRow, type ExportWindow } from './audit.repository.js';
import { AuditWriter } from './audit-writer.js';
import { ExportSlots } from './export-slots.js';
import { decodeSeqCursor, encodeSeqCursor } from './seq-cursor.js';
import type { ExportInvocationsQueryDto } from './dto/invocation.dto.js';

// Rows per query: the export holds one page in memory at a time, whatever the window holds. On PGlite a
// query runs on the main thread, about 0.1 ms a row of 8 KB arguments: 100 rows keep a page near 10 ms.
export const EXPORT_PAGE_ROWS = 100;

// The audit trail as NDJSON, oldest first: one query per page by seq, the next page asked for only when
// the client has taken the last one (the stream's backpressure), so memory stays flat for any number
// of rows. Arguments are stored redacted, so the export is too. A tenant has at most
// AUDIT_EXPORTS_PER_TENANT in progress, and each page waits its turn with other tenants' heavy steps.
@Injectable()
export class InvocationsExportService {
  private readonly slots: ExportSlots;

  constructor(
    private readonly repository: AuditRepository,
    private readonly writer: AuditWriter,
    private readonly access: AuditLogAccess,
    private readonly turns: FairTurns,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.slots = new ExportSlots(config.audit.exportsPerTenant);
  }

  // Everything that can refuse (project, window, cursor) is checked before the first byte is sent.
  async open(tenantId: string, projectId: string, query: ExportInvocationsQueryDto): Promise<Readable> {
    await this.access.assertReadable(tenantId, projectId, 'admin');
    const window: ExportWindow = { since: query.since ? new Date(query.since) : null, until: query.until ? new Date(query.until) : null };
    if (window.since && window.until && window.since >= window.until) {
      throw invalidExportWindow();
    }
    const after = query.cursor ? decodeSeqCursor(query.cursor) : 0n;
    const release = this.slots.take(tenantId);
    try {
      await this.writer.drain();
      const stream = Readable.from(this.lines(tenantId, projectId, window, after), { objectMode: false, highWaterMark: 64 * 1024 });
      // 'close' comes once the stream has ended, failed or been destroyed (both adapters destroy it when
      // the client goes away), after the page being read, if any, is done.
      stream.once('close', release);
      return stream;
    } catch (error) {
      release();
      throw error;
    }
  }

  private async *lines(tenantId: string, projectId: string, window: ExportWindow, after: bigint): AsyncGenerator<string> {
    for (;;) {
      await this.turns.take(tenantId);
      const rows = await this.repository.exportPage(tenantId, projectId, window, after, EXPORT_PAGE_ROWS);
      if (rows.length === 0) return;
      // One chunk per page: one write per page instead of one per row.
      yield rows.map(exportLine).join('');
      if (rows.length < EXPORT_PAGE_ROWS) return;
      after = BigInt(rows.at(-1)!.seq);
    }
  }
}

// The listing's fields, in its order, plus the cursor that resumes the export after this row.
function exportLine(row: ExportedInvocationRow): string {
  const head = JSON.stringify({
    id: row.id,
    projectId: row.project_id,
    tool: row.tool,
    toolset: row.toolset,
    exposedTool: row.exposed_tool,
    channel: row.channel,
    caller: row.caller_key_id === null ? null : { keyId: row.caller_key_id, name: row.caller_name },
    policy:
      row.policy_decision === null ? null : { decision: row.policy_decision, policyIds: JSON.parse(row.policy_ids ?? '[]') as unknown },
    user: row.end_user,
    status: row.status,
    event: row.event,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    durationMs: row.duration_ms,
  });
  const tail = JSON.stringify({
    argumentsTruncated: row.arguments_truncated,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    decidedBy: row.decided_by_key_id === null ? null : { keyId: row.decided_by_key_id, name: row.decided_by_name },
    cursor: encodeSeqCursor(row.seq),
  });
  // jsonb's text form is JSON on one line; it goes in as it is.
  return `${head.slice(0, -1)},"arguments":${row.arguments ?? 'null'},"redactedPaths":${row.redacted_paths ?? '[]'},${tail.slice(1)}\n`;
}
