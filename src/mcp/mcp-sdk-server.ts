import {
  type JSONRPCMessage,
  type JSONRPCRequest,
  ProtocolErrorCode,
  type RequestId,
  type Result,
  Server,
  type ServerContext,
  type TransportSendOptions,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import type { HttpExchange } from '../common/http/http-exchange.decorator.js';

// The MCP server SDK (v2, @modelcontextprotocol/server), loaded by McpEndpointService only when a message
// needs it: a batch, or a method the direct answers do not cover.
export { UnsupportedProtocolVersionError } from '@modelcontextprotocol/server';

export const SHARED_VALIDATOR = new AjvJsonSchemaValidator();

// What a tools/call of revision 2025-11-25 that asked to run as a task (params.task) answers instead of
// its result: the CreateTaskResult, made from the result of the call run as a plain one.
export type AnswerAsTask = (result: Result, name: string) => Promise<Result>;

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

const isTaskMetadata = (task: unknown): boolean =>
  typeof task === 'object' &&
  task !== null &&
  !Array.isArray(task) &&
  ((task as { ttl?: unknown }).ttl === undefined || typeof (task as { ttl?: unknown }).ttl === 'number');

// A Server that answers the task-augmented tools/call of revision 2025-11-25. The v2 Server keeps that
// revision's task vocabulary but no runtime for it: its tools/call wrapper (Server._wrapHandler) checks
// every result as a CallToolResult and refuses a CreateTaskResult ("content is required when the body
// carries 'task'", -32602). Here the call runs without params.task, so the SDK checks its request and its
// result as it does any call's, and only then is the checked result turned into the task's answer. A
// params.task that is not the revision's { ttl? } is left in place, for the SDK to refuse as invalid params.
export class TaskAwareServer extends Server {
  private answerAsTask?: AnswerAsTask;
  private beforeTask?: () => Promise<void>;

  // `beforeTask`: runs before a call asked to run as a task; what it throws answers the call, which never runs.
  answerTasksWith(answerAsTask: AnswerAsTask, beforeTask?: () => Promise<void>): void {
    this.answerAsTask = answerAsTask;
    this.beforeTask = beforeTask;
  }

  protected override _wrapHandler(method: string, handler: Handler): Handler {
    const checked = super._wrapHandler(method, handler);
    if (method !== 'tools/call') return checked;
    return async (request, ctx) => {
      const { task, ...params } = request.params ?? {};
      if (task === undefined || !isTaskMetadata(task)) return checked(request, ctx);
      if (this.answerAsTask !== undefined) await this.beforeTask?.();
      const result = await checked({ ...request, params }, ctx);
      // A revision before 2025-11-25 has no tasks (nor tasks/get to poll one): its call is answered plainly.
      return this.answerAsTask === undefined ? result : this.answerAsTask(result, String(params.name));
    };
  }
}

// Revisions up to 2025-11-25 answer a resource that is not there with -32002 (resource not found). The v2
// SDK answers -32602 on every revision: its error encoding (the codecs' encodeErrorCode, applied to every
// error a handler throws) turns -32002 into -32602, as revision 2026-07-28 asks. The requests whose handler
// refused with -32002 are noted here (noteNotFound), and their answers go out with it.
export class StatelessTransport extends WebStandardStreamableHTTPServerTransport {
  private readonly notFound = new Set<RequestId>();

  noteNotFound(id: RequestId): void {
    this.notFound.add(id);
  }

  override send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (
      'error' in message &&
      message.id !== undefined &&
      this.notFound.has(message.id) &&
      message.error.code === (ProtocolErrorCode.InvalidParams as number)
    ) {
      return super.send({ ...message, error: { ...message.error, code: ProtocolErrorCode.ResourceNotFound } }, options);
    }
    return super.send(message, options);
  }
}

// One POST through the server and its transport, from the parsed messages (`messages`: those of the body
// the SDK is to answer) to the answer sent; the server is closed after.
export async function serveExchange(
  server: Server,
  transport: StatelessTransport,
  exchange: HttpExchange,
  messages: unknown,
): Promise<void> {
  await server.connect(transport);
  try {
    const request = new Request(exchange.url, { method: exchange.method, headers: exchange.headers });
    const response = await transport.handleRequest(request, { parsedBody: messages });
    const body = response.body === null ? null : Buffer.from(await response.arrayBuffer());
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => (headers[name] = value));
    exchange.send(response.status, headers, body);
  } finally {
    await server.close();
  }
}
