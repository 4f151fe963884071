import { Inject, Injectable } from '@nestjs/common';
import { invalidCursor } from '../common/pagination/cursor.js';
import { invocationNotFound } from './audit.errors.js';
import type { Page } from '../common/pagination/cursor.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { Invocation } from '../generated/prisma/client.js';
import { AuditRepository, type InvocationFilter, type InvocationRecord } from './audit.repository.js';
import { AuditWriter } from './audit-writer.js';

export type AuditEntry = Omit<InvocationRecord, 'argumentsJson' | 'argumentsTruncated' | 'redactedPathsJson'> & {
  // Already redacted by the caller (see execution/validation/argument-redaction.ts).
  arguments: unknown;
  redactedPaths: readonly string[];
};

// The invocation log is data in the database: one row per call, whether it ran or was refused.
@Injectable()
export class AuditService {
  constructor(
    private readonly repository: AuditRepository,
    private readonly writer: AuditWriter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  // Queued for the batched writer; waits only when the queue is full (backpressure).
  record(entry: AuditEntry): Promise<void> {
    const { arguments: args, redactedPaths, ...rest } = entry;
    const { json, truncated } = capArguments(args, this.config.audit.argumentsMaxBytes);
    return this.writer.enqueue({
      ...rest,
      tool: withoutNul(entry.tool),
      errorMessage: entry.errorMessage === null ? null : withoutNul(entry.errorMessage),
      argumentsJson: json,
      argumentsTruncated: truncated,
      redactedPathsJson: redactedPaths.length > 0 ? JSON.stringify(redactedPaths) : null,
    });
  }

  // Waits until every row queued so far is written (a row that replaces a pending one must come in a later statement).
  flush(): Promise<void> {
    return this.writer.drain();
  }

  async list<R>(
    tenantId: string,
    projectId: string,
    filter: InvocationFilter,
    limit: number,
    cursor: string | undefined,
    map: (row: Invocation) => R,
  ): Promise<Page<R>> {
    await this.writer.drain();
    const rows = await this.repository.listPage(tenantId, projectId, filter, limit, cursor ? decodeSeqCursor(cursor) : null);
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    return { items: items.map(map), nextCursor: rows.length > limit && last ? encodeSeqCursor(last.seq) : null };
  }

  async get(tenantId: string, projectId: string, invocationId: string): Promise<Invocation> {
    await this.writer.drain();
    const row = await this.repository.findById(tenantId, projectId, invocationId);
    if (!row) throw invocationNotFound(invocationId);
    return row;
  }
}

// Arguments are kept for the audit as received, up to a size; beyond it, a preview of the JSON text.
// Returns the JSON text the jsonb column stores (serialised once, here), or null for no arguments.
export function capArguments(args: unknown, maxBytes: number): { json: string | null; truncated: boolean } {
  if (args === undefined || args === null) return { json: null, truncated: false };
  let text: string;
  try {
    text = JSON.stringify(args) ?? 'null';
  } catch {
    return { json: JSON.stringify({ preview: '[arguments could not be serialised]' }), truncated: true };
  }
  // PostgreSQL's text and jsonb cannot hold U+0000: keep it visible, escaped, so the row still lands.
  // In JSON text a NUL is the escape \u0000 after an even run of backslashes (an odd run escapes the \).
  if (text.includes('\\u0000')) text = text.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\\\u0000');
  if (Buffer.byteLength(text) <= maxBytes) return { json: text, truncated: false };
  const preview = Buffer.from(text).subarray(0, maxBytes).toString('utf8').replace(/\uFFFD$/, '');
  return { json: JSON.stringify({ preview }), truncated: true };
}

const withoutNul = (text: string) => text.replaceAll('\0', '\\0');

// The log pages by write order (seq), not by time: rows of one batch share their timestamp.
export const encodeSeqCursor = (seq: bigint | string) => Buffer.from(`seq:${seq}`).toString('base64url');

const MAX_SEQ = 2n ** 63n - 1n;

export function decodeSeqCursor(cursor: string): bigint {
  const match = /^seq:(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  // A forged number past bigint's range would otherwise reach the database as an error.
  if (!match || BigInt(match[1]) > MAX_SEQ) throw invalidCursor();
  return BigInt(match[1]);
}
