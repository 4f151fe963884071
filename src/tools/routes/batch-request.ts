import { batchTooLarge, duplicateCallId, emptyBatch, invalidBatch, invalidIdempotencyKey } from '../../calls/calls.errors.js';

export const BATCH_MAX_CALLS = 32;
const CALL_FIELDS = new Set(['id', 'tool', 'arguments', 'timeoutMs', 'idempotencyKey']);

export interface BatchCall {
  id: string;
  tool: string;
  // As the model wrote them: an object, or a JSON string (the gate parses and validates it per call).
  arguments: unknown;
  timeoutMs?: unknown;
  idempotencyKey?: string;
}

// The envelope of a batch, checked before anything runs: 1 to 32 calls, each with its own id and a tool
// name. What is inside `arguments` is each call's own business: an invalid call is answered on its own.
export function parseBatch(body: unknown): BatchCall[] {
  const calls = (body as { calls?: unknown } | null)?.calls;
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !Array.isArray(calls)) {
    throw invalidBatch('The body must be { "calls": [{ "id": "c1", "tool": "read_file", "arguments": {...} }, ...] }');
  }
  const extra = Object.keys(body).filter((k) => k !== 'calls');
  if (extra.length > 0) throw invalidBatch(`Unknown field(s) ${extra.join(', ')}: the body takes "calls"`);
  if (calls.length === 0) throw emptyBatch(BATCH_MAX_CALLS);
  if (calls.length > BATCH_MAX_CALLS) {
    throw batchTooLarge(calls.length, BATCH_MAX_CALLS);
  }
  const seen = new Set<string>();
  return calls.map((raw: unknown, index) => {
    const at = `calls[${index}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalidBatch(`${at} must be an object`);
    const call = raw as Record<string, unknown>;
    const unknown = Object.keys(call).filter((k) => !CALL_FIELDS.has(k));
    if (unknown.length > 0) {
      throw invalidBatch(`${at} has unknown field(s) ${unknown.join(', ')}: a call takes id, tool, arguments, timeoutMs, idempotencyKey`);
    }
    if (typeof call.id !== 'string' || call.id.length < 1 || call.id.length > 128) {
      throw invalidBatch(`${at}.id must be a string of 1 to 128 characters (yours, echoed back)`);
    }
    if (seen.has(call.id)) throw duplicateCallId(call.id);
    seen.add(call.id);
    if (typeof call.tool !== 'string' || call.tool.length < 1 || call.tool.length > 128) {
      throw invalidBatch(`${at}.tool must be a tool name`);
    }
    if (call.idempotencyKey !== undefined && typeof call.idempotencyKey !== 'string') {
      throw invalidIdempotencyKey(`${at}.idempotencyKey must be a string of 1 to 255 visible ASCII characters`);
    }
    return {
      id: call.id,
      tool: call.tool,
      arguments: call.arguments,
      ...(call.timeoutMs !== undefined ? { timeoutMs: call.timeoutMs } : {}),
      ...(call.idempotencyKey !== undefined ? { idempotencyKey: call.idempotencyKey } : {}),
    };
  });
}

// Runs `task` for every item, at most `limit` at a time; the answers keep the items' order.
export async function mapBounded<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
