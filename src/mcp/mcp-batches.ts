import { isObject } from './mcp-caller.js';

// JSON-RPC batching was removed from MCP in this revision; revisions are dates, so they compare as strings.
const FIRST_REVISION_WITHOUT_BATCHES = '2025-06-18';
// The most messages a JSON-RPC batch may carry (the SDK transport's limit, MAX_BATCH_SIZE).
const MAX_BATCH_MESSAGES = 100;

// A JSON-RPC batch before any of it runs: refused (why), or admitted with the number of requests it
// carries, which the endpoint charges to the requests rate limit (the HTTP request paid for one).
export type BatchAdmission = { refused: string } | { requests: number };

// Refused under the revisions that removed batches (2025-06-18 and later: the MCP-Protocol-Version header,
// or an initialize in the batch, says which), past the SDK transport's size, or asking twice for one thing.
export function admitBatch(messages: unknown[], headerRevision: string | undefined): BatchAdmission {
  const version = headerRevision ?? initializeVersion(messages);
  if (version !== undefined && version >= FIRST_REVISION_WITHOUT_BATCHES) {
    return {
      refused: `JSON-RPC batches are not part of MCP protocol revision ${version} (removed in ${FIRST_REVISION_WITHOUT_BATCHES}); send one message per request`,
    };
  }
  // The SDK transport's own limit, checked before the batch is charged to the rate limit: a batch refused
  // runs nothing and costs one request.
  if (messages.length > MAX_BATCH_MESSAGES) {
    return { refused: `Invalid Request: Batch must not exceed ${MAX_BATCH_MESSAGES} messages` };
  }
  const requests = messages.filter((m): m is Record<string, unknown> => isObject(m) && typeof m.method === 'string' && m.id !== undefined);
  // Each request is answered by its id: two with one id would get one answer between them, and the
  // arguments of a call are found by its id. A REST batch refuses repeated ids too.
  const repeatedId = repeatedRequestId(requests);
  if (repeatedId !== null) {
    return { refused: `A JSON-RPC batch may not repeat a request id (${repeatedId}); give each request its own` };
  }
  // A listing's answer can be a megabyte (hundreds of skill tools): a hundred copies of it in one answer
  // cost the process memory out of all proportion to the request. A batch asks for each at most once.
  const repeated = repeatedListing(requests);
  if (repeated !== null) {
    return { refused: `A JSON-RPC batch may carry at most one ${repeated} request; send the others separately` };
  }
  return { requests: requests.length };
}

// The arguments of each tools/call as the JSON parser produced them, by JSON-RPC id. The SDK's schema
// parse rebuilds objects key by key, which silently turns a "__proto__" key into a prototype; the gate
// must see what the client sent to refuse it exactly as the REST route does.
export function rawArguments(body: unknown): Map<unknown, unknown> {
  const raw = new Map<unknown, unknown>();
  for (const message of Array.isArray(body) ? body : [body]) {
    const { method, id, params } = (message ?? {}) as { method?: unknown; id?: unknown; params?: { arguments?: unknown } };
    if (method === 'tools/call' && id !== undefined && typeof params === 'object' && params !== null) raw.set(id, params.arguments);
  }
  return raw;
}

// The revision an initialize request inside a batch asks for, if there is one.
export function initializeVersion(messages: unknown[]): string | undefined {
  for (const m of messages) {
    if (isObject(m) && m.method === 'initialize' && isObject(m.params) && typeof m.params.protocolVersion === 'string')
      return m.params.protocolVersion;
  }
  return undefined;
}

// The first request id a batch carries twice, if any, as JSON (1 and "1" are different ids).
function repeatedRequestId(requests: Array<Record<string, unknown>>): string | null {
  const seen = new Set<string>();
  for (const { id } of requests) {
    const key = JSON.stringify(id) ?? String(id);
    if (seen.has(key)) return key.slice(0, 64);
    seen.add(key);
  }
  return null;
}

// The first listing method (`tools/list`, `resources/list`, …) a batch asks for more than once, if any.
function repeatedListing(requests: Array<Record<string, unknown>>): string | null {
  const seen = new Set<string>();
  for (const { method } of requests) {
    if (typeof method !== 'string' || !method.endsWith('/list')) continue;
    if (seen.has(method)) return method;
    seen.add(method);
  }
  return null;
}
