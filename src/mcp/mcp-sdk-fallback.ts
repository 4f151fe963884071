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
import { type CallToolResult, ErrorCode, McpError, type ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { concurrencyLimit } from '../common/concurrency/concurrency-limit.js';
import type { HttpExchange } from '../common/http/http-exchange.decorator.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { initializeVersion, rawArguments } from './mcp-batches.js';
import { isObject, type McpCaller, taskCaller } from './mcp-caller.js';
import { McpKeySessions } from './mcp-key-sessions.js';
import { McpOfferings } from './mcp-offerings.js';
import type * as SdkServer from './mcp-sdk-server.js';
import type { StatelessTransport, TaskAwareServer } from './mcp-sdk-server.js';
import { SERVER_INFO, withLegacyTasks } from './mcp-server-info.js';
import { McpTasks } from './mcp-tasks.service.js';
import { McpToolCalls } from './mcp-tool-calls.js';
import { IDEMPOTENCY_KEY_META, withParsedContent } from './mcp-tool-results.js';
import { RESOURCE_NOT_FOUND } from './mcp-workspace-resources.js';

// The SDK's server side is loaded on the first message the direct answers do not cover (about 5 MB that
// most instances never need). A Server builds its own Ajv instance unless given one (a quarter of the
// endpoint's CPU when each POST gets a fresh Server). It is only used to check elicitation answers, which
// a stateless endpoint never asks for, so every Server shares one.
let sdkServer: Promise<typeof SdkServer> | null = null;
export const loadSdkServer = () => (sdkServer ??= import('./mcp-sdk-server.js'));

// What the direct answers do not cover (batches, resources, prompts, completions, the tasks of
// 2025-11-25, anything the fast path does not recognise) gets a fresh server SDK (v2) Server and transport
// for the POST, which answer it by the SDK's rules; its handlers are the endpoint's own.
@Injectable()
export class McpSdkFallback {
  private readonly logger = new Logger('Mcp');

  constructor(
    private readonly offerings: McpOfferings,
    private readonly tasks: McpTasks,
    private readonly toolCalls: McpToolCalls,
    private readonly sessions: McpKeySessions,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  // `body`: the POST's message, or its batch without the cancellations the endpoint took out.
  async serve(caller: McpCaller, exchange: HttpExchange, body: unknown): Promise<void> {
    // An initialize the fast path did not take (a batch holding only it; the transport refuses one beside
    // other messages).
    const only: unknown = Array.isArray(body) && body.length === 1 ? body[0] : body;
    if (isObject(only) && only.method === 'initialize' && only.id !== undefined)
      await this.sessions.newSession(caller, isObject(only.params) ? only.params.capabilities : undefined);
    const sdk = await loadSdkServer();
    const revision = exchange.headers['mcp-protocol-version'] ?? initializeVersion(Array.isArray(body) ? body : [body]);
    const capabilities = withLegacyTasks(await this.offerings.capabilities(caller), revision);
    const transport = new sdk.StatelessTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = this.serverFor(
      sdk,
      caller,
      capabilities,
      transport,
      rawArguments(body),
      concurrencyLimit(this.config.calls.batchConcurrency),
    );
    await sdk.serveExchange(server, transport, exchange, body);
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
    const server = new sdk.TaskAwareServer(SERVER_INFO, {
      capabilities: capabilities as SdkCapabilities,
      jsonSchemaValidator: sdk.SHARED_VALIDATOR,
    });
    if (capabilities.resources) {
      server.setRequestHandler('resources/list', (request: ListResourcesRequest) =>
        this.unexpectedLogged(this.offerings.list(caller, request.params?.cursor)),
      );
      server.setRequestHandler('resources/templates/list', () => this.unexpectedLogged(this.offerings.templates(caller)));
      server.setRequestHandler('resources/read', (request: ReadResourceRequest, ctx: ServerContext) =>
        bounded(() => this.unexpectedLogged(this.offerings.read(caller, request.params.uri))).catch((error: unknown) => {
          if (error instanceof McpError && error.code === RESOURCE_NOT_FOUND) transport.noteNotFound(ctx.mcpReq.id);
          throw error;
        }),
      );
    }
    if (capabilities.completions) {
      server.setRequestHandler('completion/complete', (request: CompleteRequest) =>
        this.unexpectedLogged(this.offerings.complete(caller, request.params.ref, request.params.argument, request.params.context)),
      );
    }
    if (capabilities.prompts) {
      server.setRequestHandler('prompts/list', () => this.unexpectedLogged(this.offerings.prompts(caller)));
      server.setRequestHandler('prompts/get', (request: GetPromptRequest) =>
        bounded(() => this.unexpectedLogged(this.offerings.getPrompt(caller, request.params.name, request.params.arguments))),
      );
    }
    // The SDK's own handler keeps the level in the Server, which lives for this POST only.
    if (capabilities.logging)
      server.setRequestHandler('logging/setLevel', (request: SetLevelRequest) =>
        this.unexpectedLogged(this.sessions.setLogLevel(caller, request.params?.level)),
      );
    server.setRequestHandler('tools/list', () => this.toolCalls.list(caller) as Promise<SdkListToolsResult>);
    // Task-augmented (params.task, revision 2025-11-25): the call runs or parks as any call does, then the
    // client gets a task to poll for its result (TaskAwareServer). Earlier revisions have no tasks.
    if (capabilities.tasks) {
      server.answerTasksWith(
        async (result, name) =>
          this.unexpectedLogged(
            this.tasks.createLegacy(taskCaller(caller), result as CallToolResult, await this.toolCalls.resultShape(caller, name)),
          ),
        () => this.unexpectedLogged(this.tasks.assertRoomForResult(caller.tenantId)),
      );
    }
    // The SDK handles the result as objects (it checks and copies them), so a result written as JSON text is parsed here.
    server.setRequestHandler(
      'tools/call',
      (request: CallToolRequest, ctx: ServerContext) =>
        bounded(async () =>
          withParsedContent(
            await this.toolCalls.call(
              caller,
              request.params.name,
              raw.has(ctx.mcpReq.id) ? raw.get(ctx.mcpReq.id) : request.params.arguments,
              {
                id: ctx.mcpReq.id,
                signal: ctx.mcpReq.signal,
                idempotencyKey: ctx.mcpReq._meta?.[IDEMPOTENCY_KEY_META],
              },
            ),
          ),
        ) as Promise<SdkCallToolResult>,
    );
    if (capabilities.tasks)
      this.tasks.serveLegacy(server, taskCaller(caller), caller.controller.signal, (answer) => this.unexpectedLogged(answer));
    return server;
  }

  // The SDK would send an error's own message: nothing unexpected reaches a client (as the direct answers do).
  private async unexpectedLogged<T>(answer: Promise<T>): Promise<T> {
    try {
      return await answer;
    } catch (error) {
      if (error instanceof McpError) throw error;
      this.logger.error(error instanceof Error ? error : String(error));
      throw new McpError(ErrorCode.InternalError, 'An unexpected error occurred; it has been logged');
    }
  }
}
