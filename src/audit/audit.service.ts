import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { AuditRepository, type InvocationRecord } from './audit.repository.js';
import { AuditWriter } from './audit-writer.js';
import { jsonbSafe } from './jsonb-safe.js';
import { AUDIT_TEXT_ALLOWANCE, type AuditTextAllowance, PAST_ALLOWANCE_TEXT_BYTES } from './audit-text-allowance.js';

export type AuditEntry = Omit<
  InvocationRecord,
  'argumentsJson' | 'argumentsTruncated' | 'redactedPathsJson' | 'traceId' | 'toolset' | 'exposedTool' | 'user'
> & {
  // The end user the call was made for (Toolgate-User).
  user?: string | null;
  // A call through a toolset (see InvocationRecord).
  toolset?: string | null;
  exposedTool?: string | null;
  // The trace the call ran in, when tracing is on.
  traceId?: string | null;
  // Already redacted by the caller (see execution/validation/argument-redaction.ts).
  arguments: unknown;
  redactedPaths: readonly string[];
};

// The writing side of the invocation log: one row per call, whether it ran or was refused (InvocationsService
// is the reading side).
@Injectable()
export class AuditService {
  constructor(
    private readonly writer: AuditWriter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: AuditRepository,
    @Inject(AUDIT_TEXT_ALLOWANCE) private readonly allowance: AuditTextAllowance,
  ) {}

  // Queued for the batched writer; waits only when the queue is full (backpressure). The row's texts are kept
  // up to their caps while the tenant's auditBytesPerDay lasts, then as short previews.
  record(entry: AuditEntry): Promise<void> {
    let texts = this.texts(entry, this.config.audit.argumentsMaxBytes, ERROR_MESSAGE_MAX_CHARS);
    if (!this.allowance.take(entry.tenantId, texts.bytes)) {
      texts = this.texts(entry, PAST_ALLOWANCE_TEXT_BYTES, PAST_ALLOWANCE_TEXT_BYTES);
    }
    // Field by field: the row goes to the database as JSON of exactly these fields (AuditRepository.insertMany).
    return this.writer.enqueue({
      id: entry.id,
      tenantId: entry.tenantId,
      projectId: entry.projectId,
      tool: withoutNul(entry.tool),
      channel: entry.channel,
      status: entry.status,
      event: entry.event,
      errorCode: entry.errorCode,
      errorMessage: texts.errorMessage,
      durationMs: entry.durationMs,
      argumentsJson: texts.arguments.json,
      argumentsTruncated: texts.arguments.truncated,
      redactedPathsJson: texts.redactedPaths,
      startedAt: entry.startedAt,
      finishedAt: entry.finishedAt,
      traceId: entry.traceId ?? null,
      toolset: entry.toolset ?? null,
      exposedTool: entry.exposedTool ?? null,
      callerKeyId: entry.callerKeyId,
      callerName: entry.callerName,
      policyDecision: entry.policyDecision ?? null,
      policyIds: entry.policyIds ?? null,
      user: entry.user == null ? null : withoutNul(entry.user),
    });
  }

  private texts(entry: AuditEntry, argumentBytes: number, messageChars: number) {
    const args = capArguments(entry.arguments, argumentBytes);
    const errorMessage = entry.errorMessage === null ? null : withoutNul(capText(entry.errorMessage, messageChars));
    const redactedPaths = entry.redactedPaths.length > 0 ? jsonbSafe(capPaths(entry.redactedPaths, argumentBytes)) : null;
    // Characters of the message count as bytes: close enough for a budget of megabytes, and no encoding pass.
    const bytes = (args.json?.length ?? 0) + (errorMessage?.length ?? 0) + (redactedPaths?.length ?? 0);
    return { arguments: args, errorMessage, redactedPaths, bytes };
  }

  // A call that ran, whose result its caller never got (a batch's answer past RESPONSE_MAX_BYTES): its
  // row keeps the status of what the call did, and says why the caller was answered an error instead.
  async markResultDropped(tenantId: string, id: string, since: Date, errorCode: string, errorMessage: string): Promise<void> {
    // The row may still be queued: written first, then changed.
    await this.writer.drain();
    await this.repository.markResultDropped(tenantId, id, since, errorCode, errorMessage);
  }

  // Names who decided a parked call on its audit row (written already: the caller flushed).
  async markDecided(tenantId: string, id: string, startedAt: Date, decider: { keyId: string; name: string }): Promise<void> {
    await this.repository.markDecided(tenantId, id, startedAt, decider);
  }

  // Waits until every row queued so far is written (a row that replaces a pending one must come in a later statement).
  flush(): Promise<void> {
    return this.writer.drain();
  }
}

// A message longer than any the service writes (a tool's error quoting a large body, say) is kept in part:
// every row stays small, and a batch of them one JSON text well within what a string can hold.
const ERROR_MESSAGE_MAX_CHARS = 8 * 1024;
// One redacted path as long as a key may be (execution/validation/argument-parser.ts), escaped.
const REDACTED_PATH_MAX_CHARS = 2 * 1024;

const capText = (text: string, maxChars: number): string => (text.length <= maxChars ? text : `${text.slice(0, maxChars)}…`);

// The redacted paths as the jsonb column gets them, within the arguments' cap: each path cut to a size, and
// the list to as many as fit, with a last entry saying how many more there were.
export function capPaths(paths: readonly string[], maxBytes: number): string {
  const cut = paths.map((path) => capText(path, REDACTED_PATH_MAX_CHARS));
  const all = JSON.stringify(cut);
  if (Buffer.byteLength(all) <= maxBytes) return all;
  const kept: string[] = [];
  let bytes = 2;
  for (const [i, path] of cut.entries()) {
    const more = `… and ${cut.length - i} more`;
    const itemBytes = Buffer.byteLength(JSON.stringify(path)) + 1;
    if (bytes + itemBytes + Buffer.byteLength(JSON.stringify(more)) + 1 > maxBytes) return JSON.stringify([...kept, more]);
    kept.push(path);
    bytes += itemBytes;
  }
  return JSON.stringify(kept);
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
  text = jsonbSafe(text);
  if (Buffer.byteLength(text) <= maxBytes) return { json: text, truncated: false };
  const preview = Buffer.from(text)
    .subarray(0, maxBytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return { json: JSON.stringify({ preview }), truncated: true };
}

const withoutNul = (text: string) => text.replaceAll('\0', '\\0');
