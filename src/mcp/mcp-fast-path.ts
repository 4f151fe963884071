import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { InitializeRequestSchema, type InitializeRequest, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { HttpExchange } from '../common/http/http-exchange.decorator.js';
import { IDEMPOTENCY_KEY_META } from './mcp-tool-results.js';
import type { ClientRound } from './input-required/input-rounds.js';

// The messages the endpoint answers without building an SDK Server and transport: one JSON-RPC message
// per POST (what SDK clients send), of the shapes below, checked here by the same rules the SDK's
// transport and Server apply to them. Anything else (a batch, a response, an unknown method, a message
// the SDK's schemas would refuse, a wrong Accept or Content-Type, an unsupported MCP-Protocol-Version)
// is not recognised and goes to the SDK transport, which answers it exactly as before, errors included.
// Building the Server, its transport and the Web Request/Response pair, and the SDK's zod parses of the
// envelope, were most of the endpoint's CPU per call; for these messages they decide nothing.
export type FastMessage =
  // `tasks`: a 2026-07-28 client that declared the tasks extension (mcp-tasks.service.ts).
  // `logLevel`: revision 2026-07-28's per-request level (_meta "io.modelcontextprotocol/logLevel"), as sent.
  // `elicitUrl`: a 2026-07-28 client that declared URL-mode elicitation in the request's client capabilities.
  // `round`: a 2026-07-28 client's multi round-trip round (input-required/input-rounds.ts).
  | {
      kind: 'call';
      id: string | number;
      name: string;
      arguments: unknown;
      idempotencyKey?: unknown;
      progressToken?: string | number;
      logLevel?: unknown;
      modern?: true;
      tasks?: true;
      elicitUrl?: true;
      round?: ClientRound;
    }
  | { kind: 'list'; id: string | number; modern?: true }
  | { kind: 'ping'; id: string | number; modern?: true }
  // server/discover, of protocol revision 2026-07-28 (mcp-modern.ts).
  | { kind: 'discover'; id: string | number; modern: true }
  | { kind: 'initialize'; id: string | number; request: InitializeRequest }
  // logging/setLevel (up to revision 2025-11-25); its level is checked as it is set.
  | { kind: 'setLevel'; id: string | number; level: unknown }
  // notifications/cancelled: it names a request of another POST (McpCancellations finds it).
  | { kind: 'cancel'; requestId: string | number; reason?: string }
  // Any other notification: nothing to answer in a stateless server (202).
  | { kind: 'notification' };

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// Every key of `object` is one of `allowed` (the SDK's JSON-RPC message schemas are strict at the top).
function onlyKeys(object: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const key in object) if (!allowed.includes(key)) return false;
  return true;
}

const ENVELOPE_KEYS = ['jsonrpc', 'id', 'method', 'params'] as const;
const NOTIFICATION_KEYS = ['jsonrpc', 'method', 'params'] as const;
const CALL_PARAM_KEYS = ['name', 'arguments', '_meta'] as const;
const LIST_PARAM_KEYS = ['cursor'] as const;
const SET_LEVEL_PARAM_KEYS = ['level'] as const;
const CALL_META_KEYS = [IDEMPOTENCY_KEY_META, 'progressToken'] as const;

// The transport's header rules: Accept lists both JSON and SSE (a substring check, as the SDK does), the
// body is JSON, and a request other than initialize names a supported protocol revision or none.
function headersAllow(headers: Record<string, string>, initialize: boolean): boolean {
  const accept = headers.accept;
  if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream')) return false;
  if (!isJsonContentType(headers['content-type'] ?? null)) return false;
  if (initialize) return true;
  const version = headers['mcp-protocol-version'];
  return version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version);
}

// The message this POST carries when the fast path can answer it, else null (the SDK answers).
export function recogniseFastMessage(exchange: Pick<HttpExchange, 'headers' | 'body'>): FastMessage | null {
  const message = exchange.body;
  if (!isPlainObject(message) || message.jsonrpc !== '2.0' || typeof message.method !== 'string') return null;
  const { id, method, params } = message;
  if (params !== undefined && !isPlainObject(params)) return null;
  if (id === undefined) {
    if (!onlyKeys(message, NOTIFICATION_KEYS) || !headersAllow(exchange.headers, false)) return null;
    const cancellation = method === 'notifications/cancelled' ? cancellationOf(params) : null;
    return cancellation !== null ? { kind: 'cancel', ...cancellation } : { kind: 'notification' };
  }
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id))) || !onlyKeys(message, ENVELOPE_KEYS)) return null;
  if (!headersAllow(exchange.headers, method === 'initialize')) return null;
  switch (method) {
    case 'tools/call': {
      // name, arguments, an idempotency key and a progress token only: task augmentation and other _meta go to the SDK.
      if (params === undefined || !onlyKeys(params, CALL_PARAM_KEYS) || typeof params.name !== 'string') return null;
      if (params.arguments !== undefined && !isPlainObject(params.arguments)) return null;
      const meta = params._meta;
      if (meta !== undefined && !(isPlainObject(meta) && onlyKeys(meta, CALL_META_KEYS))) return null;
      const progressToken = meta?.progressToken;
      if (
        progressToken !== undefined &&
        !(typeof progressToken === 'string' || (typeof progressToken === 'number' && Number.isInteger(progressToken)))
      )
        return null;
      // The arguments as the JSON parser produced them: the gate must see a "__proto__" key to refuse it.
      return {
        kind: 'call',
        id,
        name: params.name,
        arguments: params.arguments,
        ...(meta !== undefined && IDEMPOTENCY_KEY_META in meta ? { idempotencyKey: meta[IDEMPOTENCY_KEY_META] } : {}),
        ...(progressToken !== undefined ? { progressToken } : {}),
      };
    }
    case 'tools/list':
      if (
        params !== undefined &&
        (!onlyKeys(params, LIST_PARAM_KEYS) || (params.cursor !== undefined && typeof params.cursor !== 'string'))
      )
        return null;
      return { kind: 'list', id };
    case 'ping':
      if (params !== undefined && Object.keys(params).length > 0) return null;
      return { kind: 'ping', id };
    case 'logging/setLevel':
      // No params at all is answered here too: -32602 naming params.level.
      if (params !== undefined && !onlyKeys(params, SET_LEVEL_PARAM_KEYS)) return null;
      return { kind: 'setLevel', id, level: params?.level };
    case 'initialize': {
      // Once per client: the SDK's own schema decides what a valid initialize is.
      const parsed = InitializeRequestSchema.safeParse({ method, params });
      return parsed.success ? { kind: 'initialize', id, request: parsed.data } : null;
    }
    default:
      return null;
  }
}

// The request a notifications/cancelled names (a string or integer id, as JSON-RPC allows), and why, or
// null when its params name none.
export function cancellationOf(params: unknown): { requestId: string | number; reason?: string } | null {
  if (!isPlainObject(params)) return null;
  const { requestId, reason } = params;
  if (!(typeof requestId === 'string' || (typeof requestId === 'number' && Number.isInteger(requestId)))) return null;
  return { requestId, ...(typeof reason === 'string' ? { reason } : {}) };
}
