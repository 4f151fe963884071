import { Inject, Injectable, Logger } from '@nestjs/common';
import type {
  CallToolRequest,
  CompleteRequest,
  GetPromptRequest,
  ListResourcesRequest,
  ReadResourceRequest,
  CallToolResult as SdkCallToolResult,
  ListToolsResult as SdkListToolsResult,
  ServerCapabilities as SdkCapabilities,
  ServerContext,
  SetLevelRequest,
} from '@modelcontextprotocol/server';
import type * as SdkServer from './mcp-sdk-server.js';
import type { StatelessTransport, TaskAwareServer } from './mcp-sdk-server.js';
import { RESOURCE_NOT_FOUND } from './mcp-workspace-resources.js';
import {
  type CallToolResult,
  ErrorCode,
  type ServerCapabilities,
  type ListToolsResult,
  type InitializeResult,
  LATEST_PROTOCOL_VERSION,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../common/errors/app-error.js';
import { writeJson } from '../common/json/json-text.js';
import { concurrencyLimit } from '../common/concurrency/concurrency-limit.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { TenantRateLimiter } from '../rate-limit/tenant-rate-limiter.js';
import { PassThrough } from 'node:stream';
import type { Tenant } from '../common/auth/auth.decorators.js';
import { KeyRevocations } from '../common/auth/key-revocations.js';
import { ClientCancelled, ClientDisconnected } from '../common/http/client-abort-controller.decorator.js';
import type { HttpExchange } from '../common/http/http-exchange.decorator.js';
import { type RegisteredTool, ToolRegistry } from '../tools/tool-registry.js';
import { ToolCallsService } from '../tools/tool-calls.service.js';
import { type CallPrincipal, principalOf, type RawToolCall } from '../tools/tool-call.gate.js';
import type { ToolCatalogue, ToolView } from '../tools/tool-catalogue.js';
import type { ToolDefinition, ToolListeners, ToolProgress } from '../execution/tool-definition.js';
import { isLogLevel, LOG_LEVELS, type LogLevel, type ToolLogMessage, type ToolLogs } from '../execution/tool-logs.js';
import { invalidIdempotencyKey } from '../calls/calls.errors.js';
import { KeyedCallService } from '../calls/keyed-call.service.js';
import { mcpMethodNotAllowed } from './mcp.errors.js';
import { cancellationOf, type FastMessage, recogniseFastMessage } from './mcp-fast-path.js';
import { advertisesOutputSchema, fromInvocation, fromRefusal, IDEMPOTENCY_KEY_META, REPLAYED_META, type ResultShape, toMcpTool, withParsedContent } from './mcp-tool-results.js';
import { McpCancellations, type McpRequestRef } from './mcp-cancellations.js';
import { McpLogLevels } from './mcp-log-levels.js';
import type { KeyInProject } from './mcp-key-scope.js';
import { McpOfferings } from './mcp-offerings.js';
import { declaresTasks, LEGACY_TASKS_CAPABILITY, McpTasks, MISSING_CLIENT_CAPABILITY, MODERN_TASKS_CAPABILITY, TASKS_EXTENSION, type TaskCaller } from './mcp-tasks.service.js';
import {
  ALL_REVISIONS,
  capabilityOf,
  DISCOVER_CACHE,
  HEADER_MISMATCH,
  headerMismatch,
  isModernRevision,
  MODERN_REVISIONS,
  type ResourceRequest,
  SERVER_INFO_META,
  resourceMessage,
  TOOLS_LIST_CACHE,
} from './mcp-modern.js';

const SERVER_INFO = { name: 'toolgate', version: '1' };
const JSON_HEADERS = { 'Content-Type': 'application/json' };
const SSE_HEADERS = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' };
// JSON-RPC batching was removed from MCP in this revision; revisions are dates, so they compare as strings.
const FIRST_REVISION_WITHOUT_BATCHES = '2025-06-18';
const FIRST_REVISION_WITH_TASKS = '2025-11-25';
// The most messages a JSON-RPC batch may carry (the SDK transport's limit, MAX_BATCH_SIZE).
const MAX_BATCH_MESSAGES = 100;
// A notification or response accepted: 202, no body (as the SDK transport answers).
const NO_BODY: Record<string, string> = {};

// The SDK's server side is loaded on the first message the direct answers do not cover (about 5 MB that
// most instances never need). A Server builds its own Ajv instance unless given one (a quarter of the
// endpoint's CPU when each POST gets a fresh Server). It is only used to check elicitation answers, which
// a stateless endpoint never asks for, so every Server shares one.
let sdkServer: Promise<typeof SdkServer> | null = null;
const loadSdkServer = () => (sdkServer ??= import('./mcp-sdk-server.js'));

// One POST as a route has it: the key, the project, the client's abort, and a toolset's view if any.
export interface McpRequest {
  tenant: Tenant;
  projectId: string;
  controller: AbortController;
  catalogue?: ToolCatalogue;
}

interface McpCaller {
  tenantId: string;
  projectId: string;
  // The key: tools/list shows and tools/call takes only the tools it is bound to.
  principal: CallPrincipal;
  // Aborted when the HTTP client goes away; a tools/call runs under it.
  controller: AbortController;
  // Aborted when the key is revoked or expires: it stops a call under an Idempotency-Key too.
  keyEnded: AbortSignal;
  // Another view of the project's tools (a toolset): tools/list shows it and tools/call goes through it.
  catalogue?: ToolCatalogue;
  // The MCP-Protocol-Version the POST names, if any: tools/list marks tools for tasks where it defines them.
  revision?: string;
}

// A project's MCP server over the Streamable HTTP transport, stateless (nothing to share between instances
// behind a load balancer), answered as plain JSON. tools/list is the project's registry; tools/call takes
// the same path as REST invoke (ToolCallsService). Three ways in: the single messages SDK clients send
// (initialize, ping, tools/list, tools/call, a notification) are answered directly (mcp-fast-path.ts);
// revision 2026-07-28 is answered by handleModern; everything else (batches, resources, prompts,
// completions, the tasks of 2025-11-25) gets a fresh server SDK (v2) Server and transport for the POST,
// which answers it by the SDK's rules.
@Injectable()
export class McpEndpointService {
  private readonly logger = new Logger('Mcp');
  // One listing per registry tool array, which keeps its identity until the project's skills change; and
  // one of them for revision 2025-11-25, which marks every tool as one a client may call as a task.
  private readonly listings = { plain: new WeakMap<readonly RegisteredTool[] | ToolView, ListToolsResult>(), tasks: new WeakMap<readonly RegisteredTool[] | ToolView, ListToolsResult>() };

  constructor(
    private readonly registry: ToolRegistry,
    private readonly calls: ToolCallsService,
    private readonly keyed: KeyedCallService,
    private readonly limiter: TenantRateLimiter,
    private readonly cancellations: McpCancellations,
    private readonly resources: McpOfferings,
    private readonly revocations: KeyRevocations,
    private readonly tasks: McpTasks,
    private readonly logLevels: McpLogLevels,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  // GET and DELETE: the project first, on the same rules as POST (a foreign project is a 404 like a
  // missing one), then the 405 the stateless transport answers.
  async refuseMethod(caller: Pick<McpCaller, 'tenantId' | 'projectId'>): Promise<never> {
    await this.registry.forProject(caller.tenantId, caller.projectId);
    throw mcpMethodNotAllowed();
  }

  async handle(request: McpRequest, exchange: HttpExchange): Promise<void> {
    const { tenant, projectId, controller, catalogue } = request;
    // A key revoked or expired while its request runs stops the request's calls, as a client leaving would,
    // and those under an Idempotency-Key too, which a client leaving does not stop.
    const keyEnded = new AbortController();
    const stop = this.revocations.untilEnded(tenant, () => {
      keyEnded.abort();
      controller.abort(new ClientDisconnected());
    });
    const revision = exchange.headers['mcp-protocol-version'];
    const caller: McpCaller = { tenantId: tenant.tenantId, projectId, principal: principalOf(tenant), controller, keyEnded: keyEnded.signal, catalogue, revision };
    try {
      await this.answer(caller, exchange);
    } finally {
      stop();
    }
  }

  private async answer(caller: McpCaller, exchange: HttpExchange): Promise<void> {
    // The project first, on the REST rules: another tenant's project answers 404 like a missing one.
    await this.registry.forProject(caller.tenantId, caller.projectId);
    const version = exchange.headers['mcp-protocol-version'];
    if (version !== undefined && isModernRevision(version)) return this.handleModern(caller, version, exchange);
    const fast = recogniseFastMessage(exchange);
    if (fast !== null) return this.answerFast(caller, fast, exchange);
    if (Array.isArray(exchange.body) && !(await this.admitBatch(caller, exchange.body, exchange))) return;
    const body = Array.isArray(exchange.body) ? this.withoutCancellations(caller, exchange.body) : exchange.body;
    if (Array.isArray(body) && body.length === 0) return exchange.send(202, NO_BODY, null);
    // An initialize the fast path did not take (a batch holding only it; the transport refuses one beside
    // other messages).
    const only: unknown = Array.isArray(body) && body.length === 1 ? body[0] : body;
    if (isObject(only) && only.method === 'initialize' && only.id !== undefined) await this.newSession(caller);
    const sdk = await loadSdkServer();
    const revision = exchange.headers['mcp-protocol-version'] ?? initializeVersion(Array.isArray(body) ? body : [body]);
    const capabilities = withLegacyTasks(await this.capabilities(caller), revision);
    const transport = new sdk.StatelessTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = this.serverFor(sdk, caller, capabilities, transport, rawArguments(body), concurrencyLimit(this.config.calls.batchConcurrency));
    await sdk.serveExchange(server, transport, exchange, body);
  }

  // The notifications/cancelled of a batch, taken out of it and sent where a single one goes
  // (McpCancellations): the request it names may run on another POST or instance, which the POST's SDK
  // Server does not know; and one it names in the same batch would get no response from the SDK, whose
  // transport then waits for it forever. Sent before the batch runs, a cancellation stops such a request as
  // it starts, and the request is answered (as cancelled). The rest of the batch is returned.
  private withoutCancellations(caller: McpCaller, messages: unknown[]): unknown[] {
    return messages.filter((message) => {
      if (!isObject(message) || message.method !== 'notifications/cancelled' || message.id !== undefined) return true;
      this.cancel(caller, cancellationOf(message.params));
      return false;
    });
  }

  // A notifications/cancelled, however it came: to McpCancellations, which stops the request on any instance.
  private cancel(caller: McpCaller, cancellation: { requestId: string | number; reason?: string } | null): void {
    if (cancellation !== null) this.cancellations.cancel(requestRef(caller, cancellation.requestId), cancellation.reason);
  }

  // Protocol revision 2026-07-28 (mcp-modern.ts), answered here, not by the v2 SDK (why: mcp-modern.ts). One
  // message per POST; its standard headers are checked against its body before anything else (a mismatch
  // is refused, nothing runs); then the direct answers (server/discover, tools, resources, prompts, the
  // tasks extension, ping and notifications), every result marked complete.
  private async handleModern(caller: McpCaller, version: string, exchange: HttpExchange): Promise<void> {
    const refuse = (status: number, id: unknown, code: number, message: string, data?: unknown) =>
      exchange.send(status, JSON_HEADERS, Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error: { code, message, ...(data ? { data } : {}) } })));
    const message = exchange.body;
    if (!isObject(message) || message.jsonrpc !== '2.0' || typeof message.method !== 'string') {
      const what = Array.isArray(message) ? 'JSON-RPC batches are not part of it' : 'the body must be one JSON-RPC request or notification';
      return refuse(400, null, ErrorCode.InvalidRequest, `Under protocol revision ${version}, ${what}`);
    }
    const { id, method } = message;
    if (!MODERN_REVISIONS.includes(version)) {
      // The SDK's own error for it (code -32022, data { supported, requested }), naming every revision spoken here.
      const { UnsupportedProtocolVersionError } = await loadSdkServer();
      const unsupported = new UnsupportedProtocolVersionError({ supported: [...ALL_REVISIONS], requested: version });
      return refuse(400, id, unsupported.code, unsupported.message, unsupported.data);
    }
    const mismatch = headerMismatch(exchange.headers, message, version);
    if (mismatch !== null) return refuse(400, id, HEADER_MISMATCH, mismatch);
    const params = isObject(message.params) ? message.params : {};
    if (id === undefined) {
      if (method === 'notifications/cancelled') this.cancel(caller, cancellationOf(params));
      return exchange.send(202, NO_BODY, null);
    }
    if (!(typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)))) return refuse(400, null, ErrorCode.InvalidRequest, 'The id must be a string or an integer');
    const invalid = (text: string) => exchange.send(200, JSON_HEADERS, Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: text } })));
    switch (method) {
      case 'server/discover':
        return this.answerFast(caller, { kind: 'discover', id, modern: true }, exchange);
      case 'ping':
        return this.answerFast(caller, { kind: 'ping', id, modern: true }, exchange);
      case 'tools/list':
        return this.answerFast(caller, { kind: 'list', id, modern: true }, exchange);
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
        return this.answerFast(
          caller,
          {
            kind: 'call',
            id,
            name: params.name,
            arguments: params.arguments,
            modern: true,
            ...tasks,
            ...(progressToken !== undefined ? { progressToken } : {}),
            ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
            ...(logLevel !== undefined ? { logLevel } : {}),
          },
          exchange,
        );
      }
      case 'tasks/get':
      case 'tasks/update':
      case 'tasks/cancel':
        // The extension's methods answer only a client that declares it on the request.
        if (!declaresTasks(params)) return refuse(200, id, MISSING_CLIENT_CAPABILITY, 'Missing required client capability', { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
        return this.answerFast(caller, { kind: 'task', id, modern: true, method, taskId: params.taskId }, exchange);
      case 'resources/list':
      case 'resources/templates/list':
      case 'resources/read':
      case 'completion/complete':
      case 'prompts/list':
      case 'prompts/get': {
        if (!(await this.capabilities(caller))[capabilityOf(method)]) break;
        const resource = resourceMessage(method, params);
        if (typeof resource === 'string') return invalid(resource);
        return this.answerFast(caller, { kind: 'resource', id, modern: true, request: resource }, exchange);
      }
    }
    return exchange.send(200, JSON_HEADERS, Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, error: { code: ErrorCode.MethodNotFound, message: `Method not found: ${method.slice(0, 128)}` } })));
  }

  // A JSON-RPC batch: refused under the revisions that removed batches (2025-06-18 and later: the
  // MCP-Protocol-Version header, or an initialize in the batch, says which), else charged to the requests
  // rate limit for every request it carries (the HTTP request paid for one), before any of them runs.
  private async admitBatch(caller: McpCaller, messages: unknown[], exchange: HttpExchange): Promise<boolean> {
    const refuse = (message: string): false => {
      exchange.send(400, JSON_HEADERS, Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, message } })));
      return false;
    };
    const version = exchange.headers['mcp-protocol-version'] ?? initializeVersion(messages);
    if (version !== undefined && version >= FIRST_REVISION_WITHOUT_BATCHES) {
      return refuse(`JSON-RPC batches are not part of MCP protocol revision ${version} (removed in ${FIRST_REVISION_WITHOUT_BATCHES}); send one message per request`);
    }
    // The SDK transport's own limit, checked before the batch is charged to the rate limit (below): a batch
    // refused runs nothing and costs one request.
    if (messages.length > MAX_BATCH_MESSAGES) {
      return refuse(`Invalid Request: Batch must not exceed ${MAX_BATCH_MESSAGES} messages`);
    }
    const requests = messages.filter((m): m is Record<string, unknown> => isObject(m) && typeof m.method === 'string' && m.id !== undefined);
    // Each request is answered by its id: two with one id would get one answer between them, and the
    // arguments of a call are found by its id. A REST batch refuses repeated ids too.
    const repeatedId = repeatedRequestId(requests);
    if (repeatedId !== null) {
      return refuse(`A JSON-RPC batch may not repeat a request id (${repeatedId}); give each request its own`);
    }
    // A listing's answer can be a megabyte (hundreds of skill tools): a hundred copies of it in one answer
    // cost the process memory out of all proportion to the request. A batch asks for each at most once.
    const repeated = repeatedListing(requests);
    if (repeated !== null) {
      return refuse(`A JSON-RPC batch may carry at most one ${repeated} request; send the others separately`);
    }
    await this.limiter.chargeExtraCalls(caller.tenantId, requests.length - 1);
    return true;
  }

  // The answers the SDK's Server would give to these messages, as its Protocol shapes them: a result, or
  // an error with the McpError's code and message.
  private async answerFast(caller: McpCaller, message: EndpointMessage, exchange: HttpExchange): Promise<void> {
    if (message.kind === 'notification') return exchange.send(202, NO_BODY, null);
    if (message.kind === 'cancel') {
      this.cancel(caller, message);
      return exchange.send(202, NO_BODY, null);
    }
    if (message.kind === 'call') {
      const logLevel = await this.logLevelOf(caller, message);
      if (message.progressToken !== undefined || logLevel !== undefined) return this.callAsStream(caller, message, exchange, logLevel);
    }
    const answer = await this.answerOf(caller, message);
    exchange.send(200, JSON_HEADERS, Buffer.from(writeJson(answer)));
  }

  // The JSON-RPC response to a request the fast path takes: its result, or an error with the McpError's
  // code and message.
  private async answerOf(caller: McpCaller, message: EndpointRequest, listening: Listening = {}): Promise<unknown> {
    try {
      return { jsonrpc: '2.0', id: message.id, result: await this.fastResult(caller, message, listening) };
    } catch (error) {
      // Nothing unexpected reaches a client: it is logged, and answered as an internal error.
      if (!(error instanceof McpError)) this.logger.error(error instanceof Error ? error : String(error));
      const { code, message: text } = error instanceof McpError ? error : { code: ErrorCode.InternalError, message: 'Internal error' };
      // Revision 2026-07-28 answers a resource that is not there with -32602 (SEP-2164); the revisions
      // before it with -32002, which the resources code throws.
      const modern = 'modern' in message && message.modern;
      return { jsonrpc: '2.0', id: message.id, error: { code: modern && code === RESOURCE_NOT_FOUND ? ErrorCode.InvalidParams : code, message: text } };
    }
  }

  // A tools/call that sent _meta.progressToken, or whose client asked for log messages (`logLevel`):
  // answered as an event stream (the Streamable HTTP form that may carry notifications before the response).
  // With a progressToken: a progress notification every MCP_PROGRESS_INTERVAL_MS while the tool runs (a
  // client resets its request timeout on each) and one for each report the tool makes (an upstream MCP
  // server's). MCP wants each notification's value above the last: progress counts the notifications, with
  // no total; a report's own numbers are in its message. With a level: the log messages of the tool's
  // upstream MCP server at or above it (notifications/message). Then the response.
  private async callAsStream(caller: McpCaller, message: Extract<FastMessage, { kind: 'call' }>, exchange: HttpExchange, logLevel: LogLevel | undefined): Promise<void> {
    const stream = new PassThrough();
    const write = (payload: unknown) => stream.write(`event: message\ndata: ${writeJson(payload)}\n\n`);
    exchange.stream(200, SSE_HEADERS, stream);
    const started = Date.now();
    let progress = 0;
    let ended = false;
    const notify = (text: string) => {
      if (ended) return;
      write({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: message.progressToken, progress: ++progress, message: text } });
    };
    const timer =
      message.progressToken !== undefined
        ? setInterval(() => notify(`${message.name} is running (${Math.round((Date.now() - started) / 1000)} s)`), this.config.transport.mcpProgressIntervalMs)
        : undefined;
    const listening: Listening = {
      ...(message.progressToken !== undefined && {
        onProgress: (report: ToolProgress) => notify(report.message ?? `${message.name}: ${report.progress}${report.total !== undefined ? ` of ${report.total}` : ''}`),
      }),
      ...(logLevel !== undefined && {
        logs: { level: logLevel, send: (log: ToolLogMessage) => !ended && write({ jsonrpc: '2.0', method: 'notifications/message', params: log }) } satisfies ToolLogs,
      }),
    };
    try {
      write(await this.answerOf(caller, message, listening));
    } finally {
      ended = true;
      clearInterval(timer);
      stream.end();
    }
  }

  private async fastResult(caller: McpCaller, message: EndpointRequest, listening: Listening): Promise<unknown> {
    const result = await this.resultOf(caller, message, listening);
    if (!('modern' in message) || !message.modern) return result;
    // Revision 2026-07-28 marks every result complete, and says how long a listing may be cached, by whom.
    const listing = message.kind === 'list' || (message.kind === 'resource' && message.request.method.endsWith('/list'));
    if (listing) return { ...(result as object), resultType: 'complete', ...TOOLS_LIST_CACHE };
    // A tools/call answered with a task says so itself (resultType "task").
    return { resultType: 'complete', ...(result as object) };
  }

  private async resultOf(caller: McpCaller, message: EndpointRequest, listening: Listening): Promise<unknown> {
    switch (message.kind) {
      case 'discover':
        // The revision's DiscoverResult has no serverInfo of its own: the server names itself in _meta.
        return {
          supportedVersions: ALL_REVISIONS,
          capabilities: { ...(await this.capabilities(caller)), extensions: MODERN_TASKS_CAPABILITY },
          ...DISCOVER_CACHE,
          _meta: { [SERVER_INFO_META]: SERVER_INFO },
        };
      case 'call': {
        const result = await this.call(caller, message.name, message.arguments, { id: message.id, idempotencyKey: message.idempotencyKey, ...listening });
        return message.tasks ? this.tasks.answerModern(taskCaller(caller), result, await this.resultShape(caller, message.name)) : result;
      }
      case 'task':
        return this.tasks.answerModernMethod(taskCaller(caller), message.method, message.taskId);
      case 'list':
        return this.list(caller);
      case 'ping':
        return {};
      case 'initialize':
        await this.newSession(caller);
        return initializeResult(message.request.params.protocolVersion, await this.capabilities(caller));
      case 'setLevel':
        return this.setLogLevel(caller, message.level);
      case 'resource':
        return this.resourceResult(caller, message.request);
    }
  }

  // The level a call's log messages are asked at: revision 2026-07-28 names it in the request, the earlier
  // ones set it with logging/setLevel. A toolset's endpoint declares no logging (its tools are the
  // toolset's, under its names, and the upstream's messages name the tools behind them): none there.
  private async logLevelOf(caller: McpCaller, message: Extract<FastMessage, { kind: 'call' }>): Promise<LogLevel | undefined> {
    if (caller.catalogue) return undefined;
    if (message.modern) return message.logLevel as LogLevel | undefined;
    return (await this.logLevels.of(keyInProject(caller))) ?? undefined;
  }

  // A new session (an initialize, however it came): the level an earlier one set no longer holds. A
  // toolset's endpoint has no logging, and leaves the project endpoint's level as it is.
  private newSession(caller: McpCaller): Promise<void> {
    return caller.catalogue ? Promise.resolve() : this.logLevels.reset(keyInProject(caller));
  }

  // logging/setLevel, where the capabilities declare logging (an MCP source this key may use declares it).
  private async setLogLevel(caller: McpCaller, level: unknown): Promise<Record<string, never>> {
    if (!(await this.capabilities(caller)).logging) throw new McpError(ErrorCode.MethodNotFound, 'Method not found');
    if (!isLogLevel(level)) throw new McpError(ErrorCode.InvalidParams, badLevel('params.level'));
    await this.logLevels.set(keyInProject(caller), level);
    return {};
  }

  // Resources where the key may call read_file or use an MCP source, on the project's own endpoint only
  // (McpOfferings); prompts and completions as the sources declare them.
  private capabilities(caller: McpCaller): Promise<ServerCapabilities> {
    return this.resources.capabilities(caller);
  }

  private resourceResult(caller: McpCaller, request: ResourceRequest): Promise<unknown> {
    switch (request.method) {
      case 'resources/list':
        return this.resources.list(caller, request.cursor);
      case 'resources/templates/list':
        return this.resources.templates(caller);
      case 'resources/read':
        return this.resources.read(caller, request.uri);
      case 'completion/complete':
        return this.resources.complete(caller, request.ref, request.argument, request.context);
      case 'prompts/list':
        return this.resources.prompts(caller);
      case 'prompts/get':
        return this.resources.getPrompt(caller, request.name, request.arguments);
    }
  }

  // A fresh v2 Server for one POST, with the handlers the capabilities declare (the SDK answers -32601 to
  // the rest). `raw`: each tools/call's arguments as parsed, by id. `bounded`: the SDK runs the calls of a
  // JSON-RPC batch all at once; they take turns, BATCH_CONCURRENCY at a time, as in a REST batch.
  private serverFor(
    sdk: typeof SdkServer,
    caller: McpCaller,
    capabilities: ServerCapabilities,
    transport: StatelessTransport,
    raw: Map<unknown, unknown>,
    bounded: ReturnType<typeof concurrencyLimit>,
  ): TaskAwareServer {
    // Toolgate's answers are typed by the 1.x SDK's types.js (the direct answers use them); the v2 types
    // describe the same wire objects, differing in detail (e.g. how they type JSON values).
    const server = new sdk.TaskAwareServer(SERVER_INFO, { capabilities: capabilities as SdkCapabilities, jsonSchemaValidator: sdk.SHARED_VALIDATOR });
    if (capabilities.resources) {
      server.setRequestHandler('resources/list', (request: ListResourcesRequest) => this.unexpectedLogged(this.resources.list(caller, request.params?.cursor)));
      server.setRequestHandler('resources/templates/list', () => this.unexpectedLogged(this.resources.templates(caller)));
      server.setRequestHandler('resources/read', (request: ReadResourceRequest, ctx: ServerContext) =>
        bounded(() => this.unexpectedLogged(this.resources.read(caller, request.params.uri))).catch((error: unknown) => {
          if (error instanceof McpError && error.code === RESOURCE_NOT_FOUND) transport.noteNotFound(ctx.mcpReq.id);
          throw error;
        }),
      );
    }
    if (capabilities.completions) {
      server.setRequestHandler('completion/complete', (request: CompleteRequest) =>
        this.unexpectedLogged(this.resources.complete(caller, request.params.ref, request.params.argument, request.params.context)),
      );
    }
    if (capabilities.prompts) {
      server.setRequestHandler('prompts/list', () => this.unexpectedLogged(this.resources.prompts(caller)));
      server.setRequestHandler('prompts/get', (request: GetPromptRequest) => bounded(() => this.unexpectedLogged(this.resources.getPrompt(caller, request.params.name, request.params.arguments))));
    }
    // The SDK's own handler keeps the level in the Server, which lives for this POST only.
    if (capabilities.logging) server.setRequestHandler('logging/setLevel', (request: SetLevelRequest) => this.unexpectedLogged(this.setLogLevel(caller, request.params?.level)));
    server.setRequestHandler('tools/list', () => this.list(caller) as Promise<SdkListToolsResult>);
    // Task-augmented (params.task, revision 2025-11-25): the call runs or parks as any call does, then the
    // client gets a task to poll for its result (TaskAwareServer). Earlier revisions have no tasks.
    if (capabilities.tasks) {
      server.answerTasksWith(async (result, name) =>
        this.unexpectedLogged(this.tasks.createLegacy(taskCaller(caller), result as CallToolResult, await this.resultShape(caller, name))),
      );
    }
    // The SDK handles the result as objects (it checks and copies them), so a result written as JSON text is parsed here.
    server.setRequestHandler('tools/call', (request: CallToolRequest, ctx: ServerContext) =>
      bounded(async () =>
        withParsedContent(
          await this.call(caller, request.params.name, raw.has(ctx.mcpReq.id) ? raw.get(ctx.mcpReq.id) : request.params.arguments, {
            id: ctx.mcpReq.id,
            signal: ctx.mcpReq.signal,
            idempotencyKey: ctx.mcpReq._meta?.[IDEMPOTENCY_KEY_META],
          }),
        ),
      ) as Promise<SdkCallToolResult>,
    );
    if (capabilities.tasks) this.tasks.serveLegacy(server, taskCaller(caller), caller.controller.signal, (answer) => this.unexpectedLogged(answer));
    return server;
  }

  // The SDK would send an error's own message: nothing unexpected reaches a client (as answerOf does).
  private async unexpectedLogged<T>(answer: Promise<T>): Promise<T> {
    try {
      return await answer;
    } catch (error) {
      if (error instanceof McpError) throw error;
      this.logger.error(error instanceof Error ? error : String(error));
      throw new McpError(ErrorCode.InternalError, 'An unexpected error occurred; it has been logged');
    }
  }

  private async list(caller: McpCaller): Promise<ListToolsResult> {
    const tasks = caller.revision !== undefined && !isModernRevision(caller.revision) && caller.revision >= FIRST_REVISION_WITH_TASKS;
    const { tools } = ToolRegistry.restrict(await this.registry.forProject(caller.tenantId, caller.projectId), caller.principal.tools);
    const shown = caller.catalogue ? caller.catalogue.view(tools) : tools;
    const listings = tasks ? this.listings.tasks : this.listings.plain;
    let listing = listings.get(shown);
    if (!listing) {
      const listed = caller.catalogue
        ? (shown as ToolView).definitions.map((d: ToolDefinition & { title?: string }) => ({ ...toMcpTool(d), ...(d.title ? { title: d.title } : {}) }))
        : tools.map((t) => toMcpTool(t.executor.definition));
      // 2025-11-25: a client may ask for any call as a task (a call that may park for a person is any call:
      // the project's approval list and the key decide); 2026-07-28 has the server decide, per call.
      listing = { tools: tasks ? listed.map((tool) => ({ ...tool, execution: { taskSupport: 'optional' as const } })) : listed };
      listings.set(shown, listing);
    }
    return listing;
  }

  // A tools/call. `request.id`: its JSON-RPC id, by which notifications/cancelled names it (on any
  // instance: McpCancellations). `request.signal`: the SDK's signal for it (a notifications/cancelled in the
  // same batch). `request.idempotencyKey`: params._meta["dev.toolgate/idempotencyKey"], REST's Idempotency-Key.
  // An unknown tool is the request's error (-32602), not a tool result: MCP's answer to a name tools/list
  // did not offer (the gate has audited the refusal). A tool that tools/list did offer (search mode's
  // call_tool) whose arguments name an unknown tool is a tool that ran and failed: its error result, with
  // the closest names, which a client relays to the model (one turns a JSON-RPC error into a fixed text).
  // MCP's arguments are optional: none is an empty object.
  private async call(caller: McpCaller, name: string, sent: unknown, request: CallRequest = {}): Promise<CallToolResult> {
    const args = sent === undefined ? {} : sent;
    const shape = await this.resultShape(caller, name);
    const cancel = new AbortController();
    const release = request.id !== undefined ? this.cancellations.track(requestRef(caller, request.id), cancel) : undefined;
    const onSdkCancel = () => cancel.abort(new ClientCancelled());
    if (request.signal?.aborted) onSdkCancel();
    else request.signal?.addEventListener('abort', onSdkCancel, { once: true });
    try {
      const run = { cancelled: cancel.signal, shape, onProgress: request.onProgress, logs: request.logs };
      if (request.idempotencyKey !== undefined) return await this.keyedCall(caller, name, args, run, request.idempotencyKey);
      return await this.plainCall(caller, name, args, run);
    } catch (error) {
      if (error instanceof AppError && error.code === 'tool_not_found' && !(await this.offers(caller, name))) throw new McpError(ErrorCode.InvalidParams, error.message);
      if (error instanceof AppError) return fromRefusal(error, shape.outputSchema);
      // The SDK would send an error's own message: nothing unexpected reaches a client.
      this.logger.error(error instanceof Error ? error : String(error));
      throw new McpError(ErrorCode.InternalError, 'An unexpected error occurred; it has been logged');
    } finally {
      release?.();
      request.signal?.removeEventListener('abort', onSdkCancel);
    }
  }

  // Whether tools/list shows a tool of this name to the caller.
  private async offers(caller: McpCaller, name: string): Promise<boolean> {
    const { tools } = ToolRegistry.restrict(await this.registry.forProject(caller.tenantId, caller.projectId), caller.principal.tools);
    if (!caller.catalogue) return tools.some((t) => t.executor.definition.name === name);
    return caller.catalogue.view(tools).definitions.some((d) => d.name === name);
  }

  // Whether tools/list showed this tool with an output schema: then structuredContent is only ever a result
  // of that schema (checked when the tool answered: ToolInvocationService); and whether it relays an
  // upstream MCP server's content. A name that is no tool is refused by the gate.
  private async resultShape(caller: McpCaller, name: string): Promise<ResultShape> {
    const { tools } = ToolRegistry.restrict(await this.registry.forProject(caller.tenantId, caller.projectId), caller.principal.tools);
    if (!caller.catalogue) {
      const tool = tools.find((t) => t.executor.definition.name === name);
      return { outputSchema: advertisesOutputSchema(tool?.executor.definition), relaysContent: tool?.executor.relaysMcpContent === true };
    }
    const view = caller.catalogue.view(tools);
    return { outputSchema: advertisesOutputSchema(view.definitions.find((d) => d.name === name)), relaysContent: relaysContentIn(view, name) };
  }

  // Each call its own controller: in a JSON-RPC batch, one call's deadline must not stop the others. The
  // client cancelling it, or going away, stops it.
  private async plainCall(caller: McpCaller, name: string, args: unknown, { cancelled, shape, onProgress, logs }: CallRun): Promise<CallToolResult> {
    const controller = new AbortController();
    const onCancel = () => controller.abort(cancelled.reason);
    const onGone = () => controller.abort(caller.controller.signal.reason);
    if (cancelled.aborted) onCancel();
    else cancelled.addEventListener('abort', onCancel, { once: true });
    if (caller.controller.signal.aborted) onGone();
    else caller.controller.signal.addEventListener('abort', onGone, { once: true });
    try {
      const outcome = await this.calls.call(
        { tenantId: caller.tenantId, projectId: caller.projectId, principal: caller.principal, toolName: name, body: { arguments: args }, channel: 'mcp', catalogue: caller.catalogue, onProgress, logs },
        controller,
      );
      return fromInvocation(outcome, shape);
    } finally {
      cancelled.removeEventListener('abort', onCancel);
      caller.controller.signal.removeEventListener('abort', onGone);
    }
  }

  // Under an Idempotency-Key, as over REST: the call runs on when the client goes away and its retry gets the
  // stored answer (marked replayed); notifications/cancelled or the key's end stop it, and that answer is kept.
  private async keyedCall(caller: McpCaller, name: string, args: unknown, { cancelled, shape, onProgress, logs }: CallRun, key: unknown): Promise<CallToolResult> {
    const call: RawToolCall = {
      tenantId: caller.tenantId,
      projectId: caller.projectId,
      principal: caller.principal,
      toolName: name,
      body: { arguments: args },
      channel: 'mcp',
      catalogue: caller.catalogue,
      onProgress,
      logs,
    };
    if (typeof key !== 'string') throw invalidIdempotencyKey(`_meta["${IDEMPOTENCY_KEY_META}"] must be a string of 1 to 255 visible ASCII characters`);
    const { outcome, replayed } = await this.keyed.call(call, key, AbortSignal.any([cancelled, caller.keyEnded]));
    const result = fromInvocation(outcome, shape);
    return replayed ? { ...result, _meta: { ...result._meta, [REPLAYED_META]: true } } : result;
  }
}

// What the client listens for while a call runs: its progress (it sent a progressToken), and its log
// messages (it set a level). Both travel on the call's event stream.
type Listening = ToolListeners;

interface CallRequest extends Listening {
  id?: string | number;
  signal?: AbortSignal;
  idempotencyKey?: unknown;
}

// A tools/call on its way to the tool: what stops it, how its result is shaped, where its progress and
// log messages go.
interface CallRun extends Listening {
  cancelled: AbortSignal;
  shape: ResultShape;
}

// Through a toolset, the real tool behind a name relays upstream content; a dispatcher (call_tool) does not.
function relaysContentIn(view: ToolView, name: string): boolean {
  try {
    return view.find(name).tool.executor.relaysMcpContent === true;
  } catch {
    return false;
  }
}

const taskCaller = (caller: McpCaller): TaskCaller => ({ ...keyInProject(caller), keyName: caller.principal.keyName });

// Revision 2026-07-28: the level a request asks log messages at, in its _meta.
const LOG_LEVEL_META = 'io.modelcontextprotocol/logLevel';
const badLevel = (where: string) => `${where} must be one of ${LOG_LEVELS.join(', ')}`;

// The key of the POST, in its project: whose tasks and logging/setLevel level are (mcp-key-scope.ts).
const keyInProject = (caller: McpCaller): KeyInProject => ({ tenantId: caller.tenantId, projectId: caller.projectId, apiKeyId: caller.principal.apiKeyId });

const requestRef = (caller: McpCaller, requestId: string | number): McpRequestRef => ({
  tenantId: caller.tenantId,
  projectId: caller.projectId,
  principalId: caller.principal.apiKeyId,
  requestId,
});

// What the SDK's Server answers to initialize (Server._oninitialize): the client's revision when
// supported, else the latest, with the same capabilities and server info as the Servers built above.
function initializeResult(requested: string, capabilities: ServerCapabilities): InitializeResult {
  const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
  return { protocolVersion, capabilities: withLegacyTasks(capabilities, protocolVersion), serverInfo: SERVER_INFO };
}

// Tasks are declared to the revision that defines them (2025-11-25), not to the older ones.
const withLegacyTasks = (capabilities: ServerCapabilities, revision: string | undefined): ServerCapabilities =>
  revision !== undefined && revision >= FIRST_REVISION_WITH_TASKS ? { ...capabilities, tasks: LEGACY_TASKS_CAPABILITY } : capabilities;

type EndpointMessage =
  | FastMessage
  | { kind: 'resource'; id: string | number; modern: true; request: ResourceRequest }
  | { kind: 'task'; id: string | number; modern: true; method: 'tasks/get' | 'tasks/update' | 'tasks/cancel'; taskId: unknown };
type EndpointRequest = Exclude<EndpointMessage, { kind: 'notification' | 'cancel' }>;


// The arguments of each tools/call as the JSON parser produced them, by JSON-RPC id. The SDK's schema
// parse rebuilds objects key by key, which silently turns a "__proto__" key into a prototype; the gate
// must see what the client sent to refuse it exactly as the REST route does.
function rawArguments(body: unknown): Map<unknown, unknown> {
  const raw = new Map<unknown, unknown>();
  for (const message of Array.isArray(body) ? body : [body]) {
    const { method, id, params } = (message ?? {}) as { method?: unknown; id?: unknown; params?: { arguments?: unknown } };
    if (method === 'tools/call' && id !== undefined && typeof params === 'object' && params !== null) raw.set(id, params.arguments);
  }
  return raw;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

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

// The revision an initialize request inside a batch asks for, if there is one.
function initializeVersion(messages: unknown[]): string | undefined {
  for (const m of messages) {
    if (isObject(m) && m.method === 'initialize' && isObject(m.params) && typeof m.params.protocolVersion === 'string') return m.params.protocolVersion;
  }
  return undefined;
}
