import { PassThrough } from 'node:stream';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ErrorCode, McpError, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Tenant } from '../common/auth/auth.decorators.js';
import { KeyRevocations } from '../common/auth/key-revocations.js';
import { ClientDisconnected } from '../common/http/client-abort-controller.decorator.js';
import type { HttpExchange } from '../common/http/http-exchange.decorator.js';
import { writeJson, writeJsonBytes } from '../common/json/json-text.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { ToolProgress } from '../execution/tool-definition.js';
import type { LogLevel, ToolLogMessage, ToolLogs } from '../execution/tool-logs.js';
import { TenantRateLimiter } from '../rate-limit/tenant-rate-limiter.js';
import { principalOf } from '../tools/tool-call.gate.js';
import type { ToolCatalogue } from '../tools/tool-catalogue.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import { admitBatch } from './mcp-batches.js';
import {
  type EndpointMessage,
  type EndpointRequest,
  isObject,
  type Listening,
  type McpCaller,
  requestRef,
  taskCaller,
  validId,
} from './mcp-caller.js';
import { McpCancellations } from './mcp-cancellations.js';
import { cancellationOf, type FastMessage, recogniseFastMessage } from './mcp-fast-path.js';
import { McpKeySessions } from './mcp-key-sessions.js';
import {
  ALL_REVISIONS,
  carriesModernEnvelope,
  DISCOVER_CACHE,
  isModernRevision,
  RESOURCE_READ_CACHE,
  type ResourceRequest,
  SERVER_INFO_META,
  TOOLS_LIST_CACHE,
} from './mcp-modern.js';
import { readModernMessage } from './mcp-modern-request.js';
import { McpOfferings } from './mcp-offerings.js';
import { McpSdkFallback } from './mcp-sdk-fallback.js';
import { initializeResult, SERVER_INFO } from './mcp-server-info.js';
import { McpTasks, MISSING_CLIENT_CAPABILITY, MODERN_TASKS_CAPABILITY } from './mcp-tasks.service.js';
import { McpInputRounds } from './input-required/input-rounds.js';
import { McpToolCalls } from './mcp-tool-calls.js';
import { RESOURCE_NOT_FOUND } from './mcp-workspace-resources.js';
import { mcpMethodNotAllowed } from './mcp.errors.js';

const JSON_HEADERS = { 'Content-Type': 'application/json' };
const SSE_HEADERS = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' };
// A notification or response accepted: 202, no body (as the SDK transport answers).
const NO_BODY: Record<string, string> = {};

// One POST as a route has it: the key, the project, the client's abort, and a toolset's view if any.
export interface McpRequest {
  tenant: Tenant;
  projectId: string;
  controller: AbortController;
  catalogue?: ToolCatalogue;
}

// A project's MCP server over the Streamable HTTP transport, stateless (nothing to share between instances
// behind a load balancer), answered as plain JSON or, for a call that reports as it runs, as an event
// stream. tools/list is the project's registry; tools/call takes the same path as REST invoke
// (mcp-tool-calls.ts). Three ways in: the single messages SDK clients send (initialize, ping, tools/list,
// tools/call, a notification) are answered directly (mcp-fast-path.ts); revision 2026-07-28 is read by
// mcp-modern-request.ts and answered directly too; everything else (batches, once admitted here, resources,
// prompts, completions, the tasks of 2025-11-25) goes to the SDK's Server (mcp-sdk-fallback.ts).
@Injectable()
export class McpEndpointService {
  private readonly logger = new Logger('Mcp');

  constructor(
    private readonly registry: ToolRegistry,
    private readonly toolCalls: McpToolCalls,
    private readonly sdkFallback: McpSdkFallback,
    private readonly sessions: McpKeySessions,
    private readonly limiter: TenantRateLimiter,
    private readonly cancellations: McpCancellations,
    private readonly offerings: McpOfferings,
    private readonly revocations: KeyRevocations,
    private readonly tasks: McpTasks,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly inputRounds: McpInputRounds,
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
    const caller: McpCaller = {
      tenantId: tenant.tenantId,
      projectId,
      principal: principalOf(tenant),
      controller,
      keyEnded: keyEnded.signal,
      catalogue,
      revision,
    };
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
    // A revision of the modern era, or one this endpoint does not speak sent by a client of that era (the
    // revision in params._meta): answered by its rules, an unsupported version with the revisions spoken.
    if (
      version !== undefined &&
      (isModernRevision(version) || (!SUPPORTED_PROTOCOL_VERSIONS.includes(version) && carriesModernEnvelope(exchange.body)))
    ) {
      return this.answerModern(caller, version, exchange);
    }
    const fast = recogniseFastMessage(exchange);
    if (fast !== null) return this.answerFast(caller, fast, exchange);
    if (Array.isArray(exchange.body) && !(await this.admitBatch(caller, exchange.body, exchange))) return;
    const body = Array.isArray(exchange.body) ? this.withoutCancellations(caller, exchange.body) : exchange.body;
    if (Array.isArray(body) && body.length === 0) return exchange.send(202, NO_BODY, null);
    await this.sdkFallback.serve(caller, exchange, body);
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

  // Protocol revision 2026-07-28: read (mcp-modern-request.ts), then answered directly, every result marked
  // complete.
  private async answerModern(caller: McpCaller, version: string, exchange: HttpExchange): Promise<void> {
    const reading = await readModernMessage(version, exchange, () => this.offerings.capabilities(caller));
    if ('refused' in reading) {
      const { status, id, ...error } = reading.refused;
      return exchange.send(status, JSON_HEADERS, Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: validId(id) ? id : null, error })));
    }
    if ('notification' in reading) {
      this.cancel(caller, reading.notification);
      return exchange.send(202, NO_BODY, null);
    }
    // Multi round-trip requests: the client's round, its requestState opened (input-required/input-rounds.ts).
    const request = reading.request;
    const roundOf =
      request.kind === 'call'
        ? 'tools/call'
        : request.kind === 'resource' && request.request.method === 'prompts/get'
          ? 'prompts/get'
          : null;
    if (roundOf !== null) {
      const body = exchange.body as { params?: unknown };
      const round = this.inputRounds.open(caller, roundOf, isObject(body.params) ? body.params : {});
      if (typeof round === 'string') {
        return exchange.send(
          200,
          JSON_HEADERS,
          Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: ErrorCode.InvalidParams, message: round } })),
        );
      }
      if (request.kind === 'call') request.round = round;
      else if (request.kind === 'resource' && request.request.method === 'prompts/get') request.request.round = round;
    }
    return this.answerFast(caller, request, exchange);
  }

  // A JSON-RPC batch: refused (mcp-batches.ts), else charged to the requests rate limit for every request
  // it carries (the HTTP request paid for one), before any of them runs.
  private async admitBatch(caller: McpCaller, messages: unknown[], exchange: HttpExchange): Promise<boolean> {
    const admission = admitBatch(messages, exchange.headers['mcp-protocol-version']);
    if ('refused' in admission) {
      exchange.send(
        400,
        JSON_HEADERS,
        Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, message: admission.refused } })),
      );
      return false;
    }
    await this.limiter.chargeExtraCalls(caller.tenantId, admission.requests - 1);
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
      const logLevel = await this.sessions.logLevelOf(caller, message);
      if (message.progressToken !== undefined || logLevel !== undefined) return this.callAsStream(caller, message, exchange, logLevel);
    }
    const answer = await this.answerOf(caller, message);
    // Revision 2026-07-28 answers -32021 (a capability the client did not declare, a source's) with HTTP 400.
    const status =
      'modern' in message && message.modern && (answer as { error?: { code?: unknown } }).error?.code === MISSING_CLIENT_CAPABILITY
        ? 400
        : 200;
    exchange.send(status, JSON_HEADERS, writeJsonBytes(answer));
  }

  // The JSON-RPC response to a request the fast path takes: its result, or an error with the McpError's
  // code and message.
  private async answerOf(caller: McpCaller, message: EndpointRequest, listening: Listening = {}): Promise<unknown> {
    try {
      return { jsonrpc: '2.0', id: message.id, result: await this.fastResult(caller, message, listening) };
    } catch (error) {
      // Nothing unexpected reaches a client: it is logged, and answered as an internal error.
      if (!(error instanceof McpError)) this.logger.error(error instanceof Error ? error : String(error));
      const {
        code,
        message: text,
        data,
      } = error instanceof McpError ? error : { code: ErrorCode.InternalError, message: 'Internal error', data: undefined };
      // Revision 2026-07-28 answers a resource that is not there with -32602 (SEP-2164); the revisions
      // before it with -32002, which the resources code throws.
      const modern = 'modern' in message && message.modern;
      return {
        jsonrpc: '2.0',
        id: message.id,
        error: {
          code: modern && code === RESOURCE_NOT_FOUND ? ErrorCode.InvalidParams : code,
          message: text,
          ...(data !== undefined && { data }),
        },
      };
    }
  }

  // A tools/call that sent _meta.progressToken, or whose client asked for log messages (`logLevel`):
  // answered as an event stream (the Streamable HTTP form that may carry notifications before the response).
  // With a progressToken: a progress notification every MCP_PROGRESS_INTERVAL_MS while the tool runs (a
  // client resets its request timeout on each) and one for each report the tool makes (an upstream MCP
  // server's). MCP wants each notification's value above the last: progress counts the notifications, with
  // no total; a report's own numbers are in its message. With a level: the log messages of the tool's
  // upstream MCP server at or above it (notifications/message). Then the response.
  private async callAsStream(
    caller: McpCaller,
    message: Extract<FastMessage, { kind: 'call' }>,
    exchange: HttpExchange,
    logLevel: LogLevel | undefined,
  ): Promise<void> {
    const stream = new PassThrough();
    const write = (payload: unknown) => stream.write(`event: message\ndata: ${writeJson(payload)}\n\n`);
    exchange.stream(200, SSE_HEADERS, stream);
    const started = Date.now();
    let progress = 0;
    let ended = false;
    const notify = (text: string) => {
      if (ended) return;
      write({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: message.progressToken, progress: ++progress, message: text },
      });
    };
    const timer =
      message.progressToken !== undefined
        ? setInterval(
            () => notify(`${message.name} is running (${Math.round((Date.now() - started) / 1000)} s)`),
            this.config.transport.mcpProgressIntervalMs,
          )
        : undefined;
    const listening: Listening = {
      ...(message.progressToken !== undefined && {
        onProgress: (report: ToolProgress) =>
          notify(report.message ?? `${message.name}: ${report.progress}${report.total !== undefined ? ` of ${report.total}` : ''}`),
      }),
      ...(logLevel !== undefined && {
        logs: {
          level: logLevel,
          send: (log: ToolLogMessage) => !ended && write({ jsonrpc: '2.0', method: 'notifications/message', params: log }),
        } satisfies ToolLogs,
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
    if (message.kind === 'resource' && message.request.method === 'resources/read')
      return { ...(result as object), resultType: 'complete', ...RESOURCE_READ_CACHE };
    // A tools/call answered with a task says so itself (resultType "task").
    return { resultType: 'complete', ...(result as object) };
  }

  private async resultOf(caller: McpCaller, message: EndpointRequest, listening: Listening): Promise<unknown> {
    switch (message.kind) {
      case 'discover':
        // The revision's DiscoverResult has no serverInfo of its own: the server names itself in _meta.
        return {
          supportedVersions: ALL_REVISIONS,
          capabilities: { ...(await this.offerings.capabilities(caller)), extensions: MODERN_TASKS_CAPABILITY },
          ...DISCOVER_CACHE,
          _meta: { [SERVER_INFO_META]: SERVER_INFO },
        };
      case 'call': {
        const result = await this.toolCalls.call(caller, message.name, message.arguments, {
          id: message.id,
          idempotencyKey: message.idempotencyKey,
          ...listening,
          ...(message.modern && { elicitUrl: message.elicitUrl === true }),
          round: message.round,
        });
        return message.tasks
          ? this.tasks.answerModern(taskCaller(caller), result, await this.toolCalls.resultShape(caller, message.name))
          : result;
      }
      case 'task':
        return this.tasks.answerModernMethod(taskCaller(caller), message.method, message.taskId);
      case 'list':
        return this.toolCalls.list(caller);
      case 'ping':
        return {};
      case 'initialize':
        await this.sessions.newSession(caller, message.request.params.capabilities);
        return initializeResult(message.request.params.protocolVersion, await this.offerings.capabilities(caller));
      case 'setLevel':
        return this.sessions.setLogLevel(caller, message.level);
      case 'resource':
        return this.resourceResult(caller, message.request, message.elicitUrl);
    }
  }

  // Resources where the key may call read_file or use an MCP source, on the project's own endpoint only
  // (McpOfferings); prompts and completions as the sources declare them.
  private resourceResult(caller: McpCaller, request: ResourceRequest, elicitUrl: boolean): Promise<unknown> {
    switch (request.method) {
      case 'resources/list':
        return this.offerings.list(caller, request.cursor);
      case 'resources/templates/list':
        return this.offerings.templates(caller);
      case 'resources/read':
        return this.offerings.read(caller, request.uri, elicitUrl);
      case 'completion/complete':
        return this.offerings.complete(caller, request.ref, request.argument, request.context);
      case 'prompts/list':
        return this.offerings.prompts(caller);
      case 'prompts/get':
        return this.offerings.getPrompt(caller, request.name, request.arguments, request.round, elicitUrl);
    }
  }
}
