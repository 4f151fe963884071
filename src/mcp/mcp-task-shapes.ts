import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { TaskWithCall } from './mcp-tasks.repository.js';

// How a task is written on the wire under each revision (mcp-tasks.service.ts decides its state).

// A person decides a parked call: seconds at best, so polling faster buys nothing.
const POLL_INTERVAL_MS = 2_000;

type Phase = 'working' | 'done' | 'cancelled';
// A task's state, whichever revision shows it: what it does now, the result once there is one.
export interface TaskState {
  phase: Phase;
  message?: string;
  result?: CallToolResult;
  updatedAt: Date;
}

// 2025-11-25 counts a tool result with isError as a failed task.
export const legacyStatus = (state: TaskState) =>
  state.phase === 'done' ? (state.result?.isError === true ? 'failed' : 'completed') : state.phase;

export function legacyTask(task: TaskWithCall, state: TaskState): Record<string, unknown> {
  return {
    taskId: task.id,
    status: legacyStatus(state),
    ...(state.message ? { statusMessage: state.message } : {}),
    createdAt: task.createdAt.toISOString(),
    lastUpdatedAt: state.updatedAt.toISOString(),
    ttl: task.expiresAt.getTime() - task.createdAt.getTime(),
    ...(state.phase === 'working' ? { pollInterval: POLL_INTERVAL_MS } : {}),
  };
}

// 2026-07-28: a tool result with isError is a completed task; `failed` is for JSON-RPC errors only.
export function modernTask(task: TaskWithCall, state: TaskState): Record<string, unknown> {
  const status = state.phase === 'done' ? 'completed' : state.phase;
  return {
    taskId: task.id,
    status,
    ...(state.message ? { statusMessage: state.message } : {}),
    createdAt: task.createdAt.toISOString(),
    lastUpdatedAt: state.updatedAt.toISOString(),
    ttlMs: task.expiresAt.getTime() - task.createdAt.getTime(),
    ...(state.phase === 'working' ? { pollIntervalMs: POLL_INTERVAL_MS } : {}),
    ...(status === 'completed' && state.result ? { result: state.result } : {}),
  };
}

// A tasks/list cursor: the (createdAt, id) of the last task shown, opaque to the client.
export function parseCursor(cursor: unknown): { createdAt: Date; id: string } {
  const invalid = () => new McpError(ErrorCode.InvalidParams, 'Invalid cursor for tasks/list');
  if (typeof cursor !== 'string' || cursor.length > 200) throw invalid();
  const [at, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(at ?? '');
  if (rest.length > 0 || !id || Number.isNaN(createdAt.getTime())) throw invalid();
  return { createdAt, id };
}
