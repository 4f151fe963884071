import { ErrorCode, type ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { HttpExchange } from '../common/http/http-exchange.decorator.js';
import { isLogLevel } from '../execution/tool-logs.js';
import { type EndpointRequest, isObject, validId } from './mcp-caller.js';
import { declaresUrlElicitation } from './mcp-client-capabilities.js';
import { cancellationOf } from './mcp-fast-path.js';
import { badLevel } from './mcp-key-sessions.js';
import {
  ALL_REVISIONS,
  capabilityOf,
  envelopeProblem,
  HEADER_MISMATCH,
  headerMismatch,
  MODERN_REVISIONS,
  REMOVED_METHODS,
  resourceMessage,
} from './mcp-modern.js';
import { loadSdkServer } from './mcp-sdk-fallback.js';
import { CLIENT_CAPABILITIES_META, declaresTasks, MISSING_CLIENT_CAPABILITY, TASKS_EXTENSION } from './mcp-tasks.service.js';
import { IDEMPOTENCY_KEY_META } from './mcp-tool-results.js';

// Revision 2026-07-28: the level a request asks log messages at, in its _meta.
const LOG_LEVEL_META = 'io.modelcontextprotocol/logLevel';

// What a POST of revision 2026-07-28 asks: a request the endpoint answers, a notification (a cancellation
// to pass on, or nothing), or a refusal with the HTTP status and JSON-RPC error it is answered with.
export type ModernReading =
  | { request: EndpointRequest }
  | { notification: { requestId: string | number; reason?: string } | null }
  | { refused: { status: number; id: unknown; code: number; message: string; data?: unknown } };

// Protocol revision 2026-07-28 (mcp-modern.ts), answered by the endpoint, not by the v2 SDK (why:
// mcp-modern.ts). One message per POST; its standard headers are checked against its body before anything
// else (a mismatch is refused, nothing runs), then the _meta envelope of a request; then the direct answers
// (server/discover, tools, resources, prompts, the tasks extension and notifications). A method the
// revision removed (initialize, ping, ...) or this endpoint does not serve is a 404 with -32601. Every
// error names the request's id where the request had one.
export async function readModernMessage(
  version: string,
  exchange: HttpExchange,
  capabilities: () => Promise<ServerCapabilities>,
): Promise<ModernReading> {
  const message = exchange.body;
  const refuse = (status: number, id: unknown, code: number, text: string, data?: unknown): ModernReading => ({
    refused: { status, id, code, message: text, ...(data ? { data } : {}) },
  });
  if (!isObject(message) || message.jsonrpc !== '2.0' || typeof message.method !== 'string') {
    const what = Array.isArray(message) ? 'JSON-RPC batches are not part of it' : 'the body must be one JSON-RPC request or notification';
    return refuse(400, isObject(message) ? message.id : null, ErrorCode.InvalidRequest, `Under protocol revision ${version}, ${what}`);
  }
  const { id, method } = message;
  if (!MODERN_REVISIONS.includes(version)) {
    // The SDK's own error for it (code -32022, data { supported, requested }), naming every revision spoken here.
    const { UnsupportedProtocolVersionError } = await loadSdkServer();
    const unsupported = new UnsupportedProtocolVersionError({ supported: [...ALL_REVISIONS], requested: version });
    return refuse(400, id, unsupported.code, `${unsupported.message}; this server speaks ${ALL_REVISIONS.join(', ')}`, unsupported.data);
  }
  const mismatch = headerMismatch(exchange.headers, message, version);
  if (mismatch !== null) return refuse(400, id, HEADER_MISMATCH, mismatch);
  const params = isObject(message.params) ? message.params : {};
  if (id === undefined) return { notification: method === 'notifications/cancelled' ? cancellationOf(params) : null };
  if (!validId(id)) return refuse(400, null, ErrorCode.InvalidRequest, 'The id must be a string or an integer');
  const envelope = envelopeProblem(message);
  if (envelope !== null) return refuse(400, id, ErrorCode.InvalidParams, envelope);
  const invalid = (text: string) => refuse(200, id, ErrorCode.InvalidParams, text);
  const notFound = () =>
    refuse(
      404,
      id,
      ErrorCode.MethodNotFound,
      REMOVED_METHODS.has(method)
        ? `Method not found: ${method} is not part of protocol revision ${version}`
        : `Method not found: ${method.slice(0, 128)}`,
    );
  switch (method) {
    case 'server/discover':
      return { request: { kind: 'discover', id, modern: true } };
    case 'tools/list':
      return { request: { kind: 'list', id, modern: true } };
    case 'tools/call': {
      if (typeof params.name !== 'string') return invalid('tools/call needs params.name, the tool to call');
      if (params.arguments !== undefined && !isObject(params.arguments)) return invalid('params.arguments must be an object');
      const meta = isObject(params._meta) ? params._meta : {};
      const token = meta.progressToken;
      const progressToken = typeof token === 'string' || (typeof token === 'number' && Number.isInteger(token)) ? token : undefined;
      const idempotencyKey = meta[IDEMPOTENCY_KEY_META];
      const logLevel = meta[LOG_LEVEL_META];
      if (logLevel !== undefined && !isLogLevel(logLevel)) return invalid(badLevel(`_meta["${LOG_LEVEL_META}"]`));
      const tasks = declaresTasks(params) ? { tasks: true as const } : {};
      const elicitUrl = declaresUrlElicitation(isObject(meta[CLIENT_CAPABILITIES_META]) ? meta[CLIENT_CAPABILITIES_META] : undefined)
        ? { elicitUrl: true as const }
        : {};
      return {
        request: {
          kind: 'call',
          id,
          name: params.name,
          arguments: params.arguments,
          modern: true,
          ...tasks,
          ...elicitUrl,
          ...(progressToken !== undefined ? { progressToken } : {}),
          ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
          ...(logLevel !== undefined ? { logLevel } : {}),
        },
      };
    }
    case 'tasks/get':
    case 'tasks/update':
    case 'tasks/cancel':
      // The extension's methods answer only a client that declares it on the request (-32021, HTTP 400).
      if (!declaresTasks(params))
        return refuse(400, id, MISSING_CLIENT_CAPABILITY, 'Missing required client capability', {
          requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
        });
      return { request: { kind: 'task', id, modern: true, method, taskId: params.taskId } };
    case 'resources/list':
    case 'resources/templates/list':
    case 'resources/read':
    case 'completion/complete':
    case 'prompts/list':
    case 'prompts/get': {
      if (!(await capabilities())[capabilityOf(method)]) return notFound();
      const resource = resourceMessage(method, params);
      if (typeof resource === 'string') return invalid(resource);
      // A read or a prompt of a source that acts as the user may answer with a link (-32042 where declared).
      const meta = isObject(params._meta) ? params._meta : {};
      const elicitUrl = declaresUrlElicitation(isObject(meta[CLIENT_CAPABILITIES_META]) ? meta[CLIENT_CAPABILITIES_META] : undefined);
      return { request: { kind: 'resource', id, modern: true, request: resource, elicitUrl } };
    }
  }
  return notFound();
}
