import { Inject, Injectable } from '@nestjs/common';
import { keyToolsWhere } from '../common/auth/key-roles.js';
import { isUuid } from '../common/validation/is-uuid.js';
import { jsonbSafe } from './jsonb-safe.js';
import { DATABASE_DRIVER, type DatabaseDriver } from '../database/database-driver.js';
import { PrismaService } from '../database/prisma.service.js';
import type { Invocation } from '../generated/prisma/client.js';

export interface InvocationRecord {
  id: string;
  tenantId: string;
  projectId: string;
  tool: string;
  // How the call arrived: rest (POST .../invoke) or mcp (tools/call on the project's MCP endpoint).
  channel: InvocationChannel;
  status: InvocationStatus;
  event: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  durationMs: number;
  // The arguments as the jsonb column gets them (JSON text, already capped), or null for none.
  argumentsJson: string | null;
  argumentsTruncated: boolean;
  // JSON Pointers of the argument values replaced by "[redacted]" (JSON text), or null for none.
  redactedPathsJson: string | null;
  startedAt: Date;
  finishedAt: Date;
  // OpenTelemetry trace id (32 hex digits) of the call, null when tracing is off.
  traceId: string | null;
  // A call through a toolset: its slug and the name the model used (`tool` is the real tool); else null.
  toolset?: string | null;
  exposedTool?: string | null;
  // The key that made the call and its name (null: a call parked before its requester was recorded).
  callerKeyId: string | null;
  callerName: string | null;
  // The policy decision before the call ran and the policies that determined it (null: no policy in force).
  policyDecision?: string | null;
  policyIds?: readonly string[] | null;
  // The end user the call was made for (Toolgate-User); null: none named.
  user?: string | null;
}

// input_required: an MCP client's call (protocol revision 2026-07-28) whose MCP source asked it for input first.
export const INVOCATION_STATUSES = [
  'ok',
  'error',
  'timeout',
  'invalid_arguments',
  'denied',
  'pending_approval',
  'expired',
  'authorization_required',
  'input_required',
] as const;
export type InvocationStatus = (typeof INVOCATION_STATUSES)[number];
// rest and mcp: tool calls; browse: a person reading the workspace through the browsing routes.
export const INVOCATION_CHANNELS = ['rest', 'mcp', 'browse'] as const;
export type InvocationChannel = (typeof INVOCATION_CHANNELS)[number];

// One audit row as the export writes it: the jsonb columns as JSON text, times as ISO 8601 text, so a
// row goes to the wire without being parsed and serialised again.
export interface ExportedInvocationRow {
  seq: string;
  id: string;
  project_id: string;
  tool: string;
  channel: string;
  status: string;
  event: string | null;
  error_code: string | null;
  error_message: string | null;
  duration_ms: number;
  arguments: string | null;
  arguments_truncated: boolean;
  redacted_paths: string | null;
  started_at: string;
  finished_at: string;
  decided_by_key_id: string | null;
  decided_by_name: string | null;
  toolset: string | null;
  exposed_tool: string | null;
  caller_key_id: string | null;
  caller_name: string | null;
  policy_decision: string | null;
  policy_ids: string | null;
  end_user: string | null;
}

export interface ExportWindow {
  since: Date | null;
  until: Date | null;
}

export interface InvocationFilter {
  tool?: string;
  status?: InvocationStatus;
  callerKeyId?: string;
  user?: string;
}

// InvocationRecord's fields by name, as JSON gives them (dates as ISO 8601 text, the jsonb columns as text).
const INSERT_ROWS = `INSERT INTO invocations (id, tenant_id, project_id, tool, status, event, error_code, error_message, duration_ms,
    arguments, arguments_truncated, redacted_paths, started_at, finished_at, channel, trace_id, toolset, exposed_tool,
    caller_key_id, caller_name, policy_decision, policy_ids, end_user)
  SELECT r.id, r."tenantId", r."projectId", r.tool, r.status, r.event, r."errorCode", r."errorMessage", r."durationMs",
    r."argumentsJson"::jsonb, r."argumentsTruncated", r."redactedPathsJson"::jsonb, r."startedAt", r."finishedAt", r.channel,
    r."traceId", r.toolset, r."exposedTool", r."callerKeyId", r."callerName", r."policyDecision", r."policyIds", r."user"
  FROM json_to_recordset($1::json) AS r(id uuid, "tenantId" uuid, "projectId" uuid, tool text, status text, event text,
    "errorCode" text, "errorMessage" text, "durationMs" int, "argumentsJson" text, "argumentsTruncated" boolean,
    "redactedPathsJson" text, "startedAt" timestamptz, "finishedAt" timestamptz, channel text, "traceId" text, toolset text,
    "exposedTool" text, "callerKeyId" uuid, "callerName" text, "policyDecision" text, "policyIds" jsonb, "user" text)
  ON CONFLICT (id, started_at) DO UPDATE SET status = EXCLUDED.status, event = EXCLUDED.event, error_code = EXCLUDED.error_code,
    error_message = EXCLUDED.error_message, duration_ms = EXCLUDED.duration_ms, finished_at = EXCLUDED.finished_at,
    trace_id = COALESCE(EXCLUDED.trace_id, invocations.trace_id),
    caller_key_id = COALESCE(invocations.caller_key_id, EXCLUDED.caller_key_id),
    caller_name = COALESCE(invocations.caller_name, EXCLUDED.caller_name),
    policy_decision = COALESCE(EXCLUDED.policy_decision, invocations.policy_decision),
    policy_ids = COALESCE(EXCLUDED.policy_ids, invocations.policy_ids)
    WHERE invocations.status = 'pending_approval'`;

@Injectable()
export class AuditRepository {
  constructor(
    private readonly prisma: PrismaService,
    @Inject(DATABASE_DRIVER) private readonly driver: DatabaseDriver,
  ) {}

  // One statement for any number of rows, whose text never changes (prepared once per connection): the rows
  // go as one JSON array, the records as they are (json_to_recordset matches their field names), and
  // json_to_recordset turns it back into rows. Encoding a batch is one JSON.stringify, where twenty
  // PostgreSQL array literals (one per column, every text element escaped by pg in JavaScript) were the
  // largest part of the audit's cost per refused call. The JSON text passes through jsonbSafe: a lone
  // surrogate or a U+0000 in any field (a key's name, a message) would make PostgreSQL refuse the batch.
  // Rows already written by an earlier, interrupted attempt are skipped, except a call's pending_approval
  // row, which its decision's row replaces (its caller stays, filled in if the pending row had none). It goes
  // to the driver directly; failures carry PostgreSQL's SQLSTATE in `code`.
  async insertMany(records: InvocationRecord[]): Promise<void> {
    await this.driver.query(INSERT_ROWS, [jsonbSafe(JSON.stringify(records))], 'audit_insert_rows');
  }

  // Whether the tenant has audit rows for this project id (the project itself may be gone).
  async projectHasRows(tenantId: string, projectId: string): Promise<boolean> {
    if (!isUuid(projectId)) return false;
    return (await this.prisma.invocation.findFirst({ where: { tenantId, projectId }, select: { id: true } })) !== null;
  }

  // `since`: no later than the call started (the rows are partitioned by started_at).
  async markResultDropped(tenantId: string, id: string, since: Date, errorCode: string, errorMessage: string): Promise<void> {
    if (!isUuid(id)) return;
    await this.prisma.invocation.updateMany({ where: { id, tenantId, startedAt: { gte: since } }, data: { errorCode, errorMessage } });
  }

  async markDecided(tenantId: string, id: string, startedAt: Date, decider: { keyId: string; name: string }): Promise<void> {
    await this.prisma.invocation.updateMany({
      where: { id, startedAt, tenantId },
      data: { decidedByKeyId: decider.keyId, decidedByName: decider.name },
    });
  }

  listPage(
    tenantId: string,
    projectId: string,
    filter: InvocationFilter,
    limit: number,
    afterSeq: bigint | null,
    tools: readonly string[] | null = null,
  ): Promise<Invocation[]> {
    if (!isUuid(projectId)) return Promise.resolve([]);
    // callerKeyId has no index of its own (every audit row would pay for one): it is read along the seq order,
    // quick for a key that made a share of the project's calls, a walk of the retained rows for one that made none.
    return this.prisma.invocation.findMany({
      where: { tenantId, projectId, ...filter, ...keyToolsWhere(tools), ...(afterSeq !== null ? { seq: { gt: afterSeq } } : {}) },
      orderBy: { seq: 'asc' },
      take: limit + 1,
    });
  }

  // One page of the export in seq order; the window is on started_at, the column the table is
  // partitioned by, so partitions outside it are never read.
  async exportPage(
    tenantId: string,
    projectId: string,
    window: ExportWindow,
    afterSeq: bigint,
    limit: number,
  ): Promise<ExportedInvocationRow[]> {
    if (!isUuid(projectId)) return [];
    const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    // ORDER BY names the column, not the text alias of the same name (text order would put 10 before 9).
    return this.driver.query<ExportedInvocationRow>(
      `SELECT seq::text AS seq, id, project_id, tool, channel, status, event, error_code, error_message, duration_ms,
         arguments::text AS arguments, arguments_truncated, redacted_paths::text AS redacted_paths,
         ${iso('started_at')} AS started_at, ${iso('finished_at')} AS finished_at, decided_by_key_id, decided_by_name,
         toolset, exposed_tool, caller_key_id, caller_name, policy_decision, policy_ids::text AS policy_ids, end_user
       FROM invocations
       WHERE tenant_id = $1 AND project_id = $2 AND seq > $3
         AND ($4::timestamptz IS NULL OR started_at >= $4) AND ($5::timestamptz IS NULL OR started_at < $5)
       ORDER BY invocations.seq
       LIMIT $6`,
      [tenantId, projectId, afterSeq.toString(), window.since?.toISOString() ?? null, window.until?.toISOString() ?? null, limit],
    );
  }

  findById(tenantId: string, projectId: string, id: string): Promise<Invocation | null> {
    if (!isUuid(projectId) || !isUuid(id)) return Promise.resolve(null);
    return this.prisma.invocation.findFirst({ where: { id, tenantId, projectId } });
  }
}
