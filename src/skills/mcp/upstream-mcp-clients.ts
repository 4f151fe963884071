import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type * as SdkClientModule from './mcp-sdk-client.js';
import type { CallToolResult, McpError, ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../../common/errors/app-error.js';
import { WORKER_POOL, type WorkerPool } from '../../common/worker-pool/worker-pool.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { ToolError } from '../../execution/tool-error.js';
import type { ToolListeners, ToolProgress } from '../../execution/tool-definition.js';
import type { ToolLogs } from '../../execution/tool-logs.js';
import { redactText, scrubWholeValues } from '../../common/secrets/secret-redaction.js';
import type { SkillWorkerTasks } from '../executors/skill-worker-tasks.js';
import { executorSecrets } from '../skill-secrets.js';
import { guardedMcpFetch } from './guarded-mcp-fetch.js';
import { schemaIssue } from './schema-issue.js';
import { upstreamLogRelay } from './upstream-log-relay.js';

export interface UpstreamTarget {
  tenantId: string;
  url: string;
  headers?: Record<string, string>;
}

// Most bytes one answer of an upstream server may carry, and the longest a registration may wait on it.
export const UPSTREAM_MAX_BYTES = 4 * 1024 * 1024;
export const UPSTREAM_IMPORT_TIMEOUT_MS = 10_000;
const MAX_CLIENTS = 256;
const CLIENT_INFO = { name: 'toolgate', version: '1' };

// The SDK's client side (about 8 MB) is loaded with the first upstream connection: most instances serve
// no MCP skill.
type SdkClient = typeof SdkClientModule;
let sdkClient: Promise<SdkClient> | null = null;
const loadSdkClient = () => (sdkClient ??= import('./mcp-sdk-client.js'));

// Connections to tenants' upstream MCP servers, through the official SDK client over a guarded fetch.
// One initialised client per tenant, URL and headers is kept (an MCP session), so a call costs one
// round trip; a session the upstream no longer knows (it restarted, or expired it) is initialised again
// once, and a connection that fails is dropped so the next call starts afresh.
@Injectable()
export class UpstreamMcpClients implements OnApplicationShutdown {
  private readonly clients = new Map<string, Promise<Client>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WORKER_POOL) private readonly pool: WorkerPool<SkillWorkerTasks>,
  ) {}

  // At registration: the upstream's tools, all pages, within UPSTREAM_IMPORT_TIMEOUT_MS.
  async listTools(target: UpstreamTarget): Promise<Tool[]> {
    const signal = AbortSignal.timeout(UPSTREAM_IMPORT_TIMEOUT_MS);
    const client = await this.connect(target, UPSTREAM_IMPORT_TIMEOUT_MS, signal);
    try {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { signal, timeout: UPSTREAM_IMPORT_TIMEOUT_MS });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor && tools.length < 1024);
      return tools;
    } catch (error) {
      throw asToolError(target, error);
    } finally {
      await client.close().catch(() => undefined);
    }
  }

  // `listening.onProgress`: asks the upstream for progress reports (a progressToken) and receives them.
  // `listening.logs`: the caller wants the upstream's log messages at or above a level. The SDK client hands
  // a session's notifications/message to one handler, without the request they came with, so such a call
  // gets a session of its own (one more initialize), asks the upstream for that level when it declares
  // logging, and relays what arrives (upstream-log-relay.ts). Every failure, the upstream's JSON-RPC errors
  // included, is the tool's error (a ToolError naming the server).
  callTool(
    target: UpstreamTarget,
    name: string,
    args: Record<string, unknown>,
    timeoutMs: number,
    signal: AbortSignal,
    listening: ToolListeners = {},
  ): Promise<CallToolResult> {
    // The SDK's own timeout stays out of the way: the call's deadline is the tool's (ToolRunner).
    const { onProgress, logs } = listening;
    const progress = onProgress && { onprogress: ({ progress, total, message }: ToolProgress) => onProgress({ progress, total, message }) };
    const call = async (client: Client) =>
      (await client.callTool({ name, arguments: args }, undefined, { signal, timeout: timeoutMs + 1_000, ...progress })) as CallToolResult;
    if (logs) return this.onOwnSession(target, timeoutMs, signal, logs, name, call);
    return this.onSession(target, timeoutMs, signal, call, false);
  }

  // One other request on the kept session (a resource read, a prompt, a completion). The upstream's own
  // JSON-RPC error stays an McpError with its code (its message cut, without the target's credentials);
  // any other failure is a ToolError naming the server.
  request<T>(target: UpstreamTarget, timeoutMs: number, signal: AbortSignal, run: (client: Client) => Promise<T>): Promise<T> {
    return this.onSession(target, timeoutMs, signal, run, true);
  }

  // What the upstream declared at initialize (resources, prompts, completions), from the kept session.
  serverCapabilities(target: UpstreamTarget, timeoutMs: number, signal: AbortSignal): Promise<ServerCapabilities> {
    return this.onSession(target, timeoutMs, signal, (client) => Promise.resolve(client.getServerCapabilities() ?? {}), true);
  }

  // A session the upstream no longer knows is initialised again once; a connection that failed is dropped.
  private async onSession<T>(
    target: UpstreamTarget,
    timeoutMs: number,
    signal: AbortSignal,
    run: (client: Client) => Promise<T>,
    keepRpcErrors: boolean,
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const key = keyOf(target);
      let pending = this.clients.get(key);
      if (!pending) {
        pending = this.connect(target, timeoutMs, signal);
        this.remember(key, pending);
      }
      try {
        return await run(await pending);
      } catch (error) {
        // The SDK is loaded by then: the error came from a connection or its answer.
        const sdk = await loadSdkClient();
        // Another request on the same session found it broken (a 401, a lost session) and closed it: this one's
        // "connection closed" says nothing of the upstream, so a read, listing or prompt asks again on a session of
        // its own. A tool call is not sent twice: it may have run before the session closed.
        const closedUnderUs =
          keepRpcErrors &&
          this.clients.get(key) !== pending &&
          error instanceof sdk.McpError &&
          error.code === (sdk.ErrorCode.ConnectionClosed as number);
        const lost = sessionLost(sdk, error) || closedUnderUs;
        if (
          keepRpcErrors &&
          !lost &&
          !signal.aborted &&
          error instanceof sdk.McpError &&
          error.code !== (sdk.ErrorCode.ConnectionClosed as number)
        ) {
          throw asUpstreamError(target, sdk, error);
        }
        this.forget(key, pending);
        if (signal.aborted) throw error;
        if (attempt === 0 && lost) continue;
        throw credentialsRefused(sdk, target, error) ?? asToolError(target, error);
      }
    }
  }

  // One call on a session opened for it and closed after, whose log messages go to `logs`.
  private async onOwnSession<T>(
    target: UpstreamTarget,
    timeoutMs: number,
    signal: AbortSignal,
    logs: ToolLogs,
    tool: string,
    run: (client: Client) => Promise<T>,
  ): Promise<T> {
    const client = await this.connect(target, timeoutMs, signal);
    try {
      const { LoggingMessageNotificationSchema } = await loadSdkClient();
      const relay = upstreamLogRelay(logs, executorSecrets(target), tool);
      client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => relay(notification.params));
      // An upstream that refuses the level still sends what it sends; the relay filters by level anyway.
      if (client.getServerCapabilities()?.logging) {
        await client.setLoggingLevel(logs.level, { signal, timeout: timeoutMs }).catch((error: unknown) => {
          if (signal.aborted) throw error;
        });
      }
      return await run(client);
    } catch (error) {
      if (signal.aborted) throw error;
      throw asToolError(target, error);
    } finally {
      // The session was this call's: the upstream may forget it (DELETE), as a client that is done should.
      const transport = client.transport as { terminateSession?: () => Promise<void> } | undefined;
      await transport?.terminateSession?.().catch(() => undefined);
      await client.close().catch(() => undefined);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.allSettled(all.map(async (pending) => (await pending).close()));
  }

  private async connect(target: UpstreamTarget, timeoutMs: number, signal: AbortSignal): Promise<Client> {
    const sdk = await loadSdkClient();
    const { Client, StreamableHTTPClientTransport } = sdk;
    const transport = new StreamableHTTPClientTransport(new URL(target.url), {
      requestInit: { headers: target.headers ?? {} },
      fetch: guardedMcpFetch({
        allowHosts: this.config.tools.fetch.allowHosts,
        timeoutMs,
        maxBytes: UPSTREAM_MAX_BYTES,
        reshapeLargeAnswer: (body, contentType) =>
          this.pool.run(
            'capUpstreamAnswer',
            { bytes: body, contentType, maxContentItems: this.config.tools.mcpResultMaxContentItems },
            { key: target.tenantId },
          ),
      }),
    });
    const client = new Client(CLIENT_INFO);
    try {
      await client.connect(transport, { signal, timeout: timeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw credentialsRefused(sdk, target, error) ?? asToolError(target, error);
    }
    return client;
  }

  private remember(key: string, pending: Promise<Client>): void {
    if (this.clients.size >= MAX_CLIENTS) {
      const [oldestKey, oldest] = this.clients.entries().next().value as [string, Promise<Client>];
      this.forget(oldestKey, oldest);
    }
    this.clients.set(key, pending);
    // A connection that failed is not kept for the next call.
    pending.catch(() => this.clients.get(key) === pending && this.clients.delete(key));
  }

  private forget(key: string, pending: Promise<Client>): void {
    if (this.clients.get(key) === pending) this.clients.delete(key);
    pending.then((client) => client.close()).catch(() => undefined);
  }
}

const keyOf = (target: UpstreamTarget) => JSON.stringify([target.tenantId, target.url, target.headers ?? {}]);

// The upstream answered 404 to a request with our session id, or 400 asking for initialisation.
function sessionLost(sdk: SdkClient, error: unknown): boolean {
  if (error instanceof sdk.StreamableHTTPError) return error.code === 404 || (error.code === 400 && /session/i.test(error.message));
  return error instanceof Error && /session not found|server not initialized/i.test(error.message);
}

// The upstream answered 401: the credentials it was sent are refused (a connection's token may be refreshed
// and the request tried once more, see mcp-source-auth.ts).
function credentialsRefused(sdk: SdkClient, target: UpstreamTarget, error: unknown): ToolError | null {
  if (!(error instanceof sdk.StreamableHTTPError) || error.code !== 401) return null;
  return new ToolError(
    'upstream_unauthorized',
    `The MCP server at ${safeHost(target.url)} refused the credentials it was sent (401)`,
    false,
  );
}

// A refusal of our own (the address policy) stays one; everything else about the upstream is a failure
// the model may retry: it was unreachable, slow, or broke the protocol. The SDK's messages quote what the
// server answered, which may echo the headers or the URL it was sent: those never reach the message.
function asToolError(target: UpstreamTarget, error: unknown): Error {
  if (error instanceof AppError) return error;
  const secrets = executorSecrets(target);
  if (error instanceof ToolError) {
    const message = redactText(scrubWholeValues(error.message, secrets));
    return message === error.message ? error : new ToolError(error.code, message, error.retryable);
  }
  const host = safeHost(target.url);
  const detail = redactText(
    scrubWholeValues(schemaIssue(error) ?? (error instanceof Error ? error.message : String(error)), secrets),
  ).slice(0, 300);
  return new ToolError('upstream_unavailable', `The MCP server at ${host} could not be used: ${detail}; retry later`, true);
}

// An upstream's own JSON-RPC error (an unknown resource, a bad argument, its request timing out): its code
// kept, its message cut and without the target's credentials.
function asUpstreamError(target: UpstreamTarget, sdk: SdkClient, error: McpError): McpError {
  const message = redactText(scrubWholeValues(error.message, executorSecrets(target))).slice(0, 500);
  return new sdk.McpError(error.code, `${message} (the MCP server at ${safeHost(target.url)})`);
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the configured address';
  }
}
