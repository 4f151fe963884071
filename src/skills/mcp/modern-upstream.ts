import { Inject, Injectable } from '@nestjs/common';
import { TtlLruCache } from '../../common/cache/ttl-lru-cache.js';
import { measureJson, RESULT_MAX_DEPTH } from '../../common/json/bounded-json.js';
import { redactText, scrubWholeValues } from '../../common/secrets/secret-redaction.js';
import { WORKER_POOL, type WorkerPool } from '../../common/worker-pool/worker-pool.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { type InputRequiredAnswer, type InputRound, inputRequestsProblem } from '../../execution/input-required.js';
import type { ToolProgress } from '../../execution/tool-definition.js';
import { ToolError } from '../../execution/tool-error.js';
import type { ToolLogs } from '../../execution/tool-logs.js';
import type { SkillWorkerTasks } from '../executors/skill-worker-tasks.js';
import { executorSecrets } from '../skill-secrets.js';
import { guardedMcpFetch } from './guarded-mcp-fetch.js';
import { upstreamLogRelay } from './upstream-log-relay.js';
import type { UpstreamTarget } from './upstream-mcp-clients.js';

// An upstream MCP server spoken to at protocol revision 2026-07-28, for an MCP client of that revision
// (UpstreamMcpClients speaks 2025-11-25, with sessions, to everyone else). The revision is stateless: each
// request is one POST carrying its own envelope (the revision, the client's capabilities and name in
// params._meta) and the standard headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name), answered as JSON or
// as an event stream of the request's notifications and its response. Written directly over the guarded
// fetch (address policy, no redirect, the deadline, the size cap, large answers reshaped on a pool thread),
// as only tools/call and prompts/get are sent, and their answers must come back exactly as the source gave
// them: a complete result, or its request for input (resultType "input_required") with its own state.
//
// Whether a source speaks the revision is asked once in a while with server/discover (the revision's way
// to learn what a server supports before sending it anything else); a source that does not answer it with
// 2026-07-28 among its supportedVersions is spoken to as before.

export const MODERN_REVISION = '2026-07-28';
const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';
const CLIENT_INFO_META = 'io.modelcontextprotocol/clientInfo';
const LOG_LEVEL_META = 'io.modelcontextprotocol/logLevel';
const CLIENT_INFO = { name: 'toolgate', version: '1' };

// How long a source's answer to server/discover is trusted, and one that could not be asked is left alone.
export const DISCOVERED_FOR_MS = 5 * 60_000;
const UNASKED_FOR_MS = 15_000;
const DISCOVER_TIMEOUT_MS = 5_000;
const MAX_SOURCES = 1024;
// Most bytes one answer may carry (as UpstreamMcpClients).
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export type ModernMethod = 'tools/call' | 'prompts/get';

export interface ModernRequest {
  method: ModernMethod;
  // The tool or prompt, as the source names it.
  name: string;
  // tools/call: the arguments object; prompts/get: the map of strings, if any.
  arguments?: Record<string, unknown>;
  round: InputRound;
  timeoutMs: number;
  signal: AbortSignal;
  onProgress?: (report: ToolProgress) => void;
  logs?: ToolLogs;
}

// What the source answered: its result (resultType "complete", dropped), or its request for input.
export type ModernAnswer =
  { kind: 'complete'; result: Record<string, unknown> } | { kind: 'input_required'; required: InputRequiredAnswer };

// A JSON-RPC error the source answered: its code and data kept, its message cut and without the target's credentials.
export class UpstreamRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'UpstreamRpcError';
  }
}

@Injectable()
export class ModernUpstreams {
  // Whether each source (tenant and URL: what it speaks is the server's, whoever's credentials go along)
  // speaks 2026-07-28, as its server/discover said.
  private readonly discovered = new TtlLruCache<string, boolean>(DISCOVERED_FOR_MS, MAX_SOURCES);
  private readonly unasked = new TtlLruCache<string, true>(UNASKED_FOR_MS, MAX_SOURCES);
  private nextId = 1;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WORKER_POOL) private readonly pool: WorkerPool<SkillWorkerTasks>,
  ) {}

  // Whether the source speaks 2026-07-28. A source that refuses the credentials (401) is the call's error,
  // so that a connection's token is refreshed as for any call; any other failure to answer is "no".
  async speaksModern(target: UpstreamTarget, signal: AbortSignal): Promise<boolean> {
    const key = JSON.stringify([target.tenantId, target.url]);
    const known = this.discovered.get(key);
    if (known !== undefined) return known;
    if (this.unasked.get(key)) return false;
    const version = this.discovered.version;
    let modern: boolean;
    try {
      const answer = await this.exchange(
        target,
        'server/discover',
        undefined,
        { _meta: envelope({}) },
        AbortSignal.any([signal, AbortSignal.timeout(DISCOVER_TIMEOUT_MS)]),
        DISCOVER_TIMEOUT_MS,
      );
      const versions = answer.result.supportedVersions;
      modern = Array.isArray(versions) && versions.includes(MODERN_REVISION);
    } catch (error) {
      if (signal.aborted || (error instanceof ToolError && error.code === 'upstream_unauthorized')) throw error;
      // Not reached (down, slow): asked again soon, spoken to as before meanwhile. A server that answered,
      // with an error or not at all to the request (an earlier revision's server has no server/discover), has said no.
      if (!(error instanceof UpstreamRpcError || error instanceof UnansweredRequest)) {
        this.unasked.set(key, true);
        return false;
      }
      modern = false;
    }
    this.discovered.setIfUnchanged(version, key, modern);
    return modern;
  }

  // The source told it no longer speaks the revision (-32022): asked again before the next call.
  forget(target: UpstreamTarget): void {
    this.discovered.delete(JSON.stringify([target.tenantId, target.url]));
  }

  // One tools/call or prompts/get, with the client's round: its capabilities in the envelope, its answers
  // and the source's own state beside the request's parameters. The source's JSON-RPC error is an
  // UpstreamRpcError; every other failure a ToolError naming the server.
  async request(target: UpstreamTarget, request: ModernRequest): Promise<ModernAnswer> {
    const progressToken = request.onProgress ? `toolgate-${this.nextId}` : undefined;
    const meta = envelope(request.round.clientCapabilities);
    if (progressToken !== undefined) meta.progressToken = progressToken;
    if (request.logs) meta[LOG_LEVEL_META] = request.logs.level;
    const { round } = request;
    const params: Record<string, unknown> = {
      name: request.name,
      ...(request.arguments !== undefined && { arguments: request.arguments }),
      ...(round.inputResponses !== undefined && { inputResponses: round.inputResponses }),
      ...(round.requestState !== undefined && { requestState: round.requestState }),
      _meta: meta,
    };
    const relayLog = request.logs ? upstreamLogRelay(request.logs, executorSecrets(target), request.name) : undefined;
    const onNotification = (method: unknown, notification: Record<string, unknown>) => {
      if (
        method === 'notifications/progress' &&
        progressToken !== undefined &&
        notification.progressToken === progressToken &&
        typeof notification.progress === 'number'
      ) {
        request.onProgress?.({
          progress: notification.progress,
          ...(typeof notification.total === 'number' && { total: notification.total }),
          ...(typeof notification.message === 'string' && { message: notification.message }),
        });
      } else if (method === 'notifications/message') relayLog?.(notification);
    };
    let answer: RpcAnswer;
    try {
      answer = await this.exchange(target, request.method, request.name, params, request.signal, request.timeoutMs, onNotification);
    } catch (error) {
      if (error instanceof UpstreamRpcError && error.code === UNSUPPORTED_PROTOCOL_VERSION) this.forget(target);
      throw error;
    }
    const result = answer.result;
    const resultType = result.resultType;
    if (resultType === 'input_required') {
      const problem = inputRequestsProblem(result);
      if (problem !== null)
        throw new ToolError(
          'upstream_unavailable',
          `The MCP server at ${safeHost(target.url)} answered ${request.method} with ${problem}`,
          false,
        );
      // Relayed to the client as it came, so held to the cap on results as a result is (the answer's text
      // was already, in guardedMcpFetch: this holds whatever reached here).
      const measured = measureJson(result, { maxDepth: RESULT_MAX_DEPTH, maxBytes: MAX_ANSWER_BYTES });
      if (measured !== 'fits') {
        const what =
          measured.exceeded === 'depth'
            ? `nested more than ${RESULT_MAX_DEPTH} levels deep`
            : measured.exceeded === 'size'
              ? `larger than ${MAX_ANSWER_BYTES} bytes as JSON`
              : 'that is not JSON';
        throw new ToolError(
          measured.exceeded === 'depth' ? 'result_too_deep' : measured.exceeded === 'size' ? 'result_too_large' : 'result_not_json',
          `The MCP server at ${safeHost(target.url)} answered ${request.method} with a request for input ${what} (the cap on results); it was dropped`,
          false,
        );
      }
      return {
        kind: 'input_required',
        required: {
          ...(result.inputRequests !== undefined && { inputRequests: result.inputRequests as InputRequiredAnswer['inputRequests'] }),
          ...(typeof result.requestState === 'string' && { requestState: result.requestState }),
        },
      };
    }
    if (resultType !== undefined && resultType !== 'complete') {
      throw new ToolError(
        'upstream_unavailable',
        `The MCP server at ${safeHost(target.url)} answered ${request.method} with a result of type ${printable(JSON.stringify(resultType))}, which Toolgate does not relay`,
        false,
      );
    }
    const { resultType: _complete, ...complete } = result;
    return { kind: 'complete', result: complete };
  }

  // One POST and its answer: the JSON-RPC response to it, its notifications handed to `onNotification` in
  // the order they came (the answer is read whole, as every upstream answer is).
  private async exchange(
    target: UpstreamTarget,
    method: string,
    name: string | undefined,
    params: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
    onNotification?: (method: unknown, params: Record<string, unknown>) => void,
  ): Promise<RpcAnswer> {
    const id = this.nextId++;
    const fetch = guardedMcpFetch({
      allowHosts: this.config.tools.fetch.allowHosts,
      timeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
      reshapeLargeAnswer: (body, contentType) =>
        this.pool.run(
          'capUpstreamAnswer',
          { bytes: body, contentType, maxContentItems: this.config.tools.mcpResultMaxContentItems },
          { key: target.tenantId },
        ),
    });
    const headers: Record<string, string> = {
      ...target.headers,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN_REVISION,
      'Mcp-Method': method,
      ...(name !== undefined && { 'Mcp-Name': headerValue(name) }),
    };
    let response: Response;
    try {
      response = await fetch(target.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }), signal });
    } catch (error) {
      throw this.asToolError(target, error);
    }
    if (response.status === 401)
      throw new ToolError(
        'upstream_unauthorized',
        `The MCP server at ${safeHost(target.url)} refused the credentials it was sent (401)`,
        false,
      );
    const contentType = response.headers.get('content-type') ?? '';
    const text = await response.text();
    const messages = /^\s*text\/event-stream/i.test(contentType)
      ? eventStreamMessages(text)
      : /json/i.test(contentType)
        ? [parsed(text)]
        : [];
    for (const message of messages) {
      if (!isPlainObject(message)) continue;
      if (message.id === undefined && typeof message.method === 'string') {
        onNotification?.(message.method, isPlainObject(message.params) ? message.params : {});
        continue;
      }
      if (message.id !== id) continue;
      if (isPlainObject(message.error)) {
        const { code, message: text, data } = message.error;
        const shown = this.shown(target, typeof text === 'string' ? text : 'an error without a message').slice(0, 500);
        throw new UpstreamRpcError(typeof code === 'number' ? code : -32603, `${shown} (the MCP server at ${safeHost(target.url)})`, data);
      }
      if (isPlainObject(message.result)) return { result: message.result };
    }
    const what = response.status >= 200 && response.status < 300 ? `no answer to ${method}` : `HTTP ${response.status} to ${method}`;
    throw new UnansweredRequest(
      'upstream_unavailable',
      `The MCP server at ${safeHost(target.url)} could not be used: it answered ${what}; retry later`,
      true,
    );
  }

  // A message the server's answer may quote (its own echo of the headers or URL it was sent): without them.
  private shown(target: UpstreamTarget, message: string): string {
    return redactText(scrubWholeValues(message, executorSecrets(target)));
  }

  private asToolError(target: UpstreamTarget, error: unknown): Error {
    if (error instanceof ToolError) {
      const message = this.shown(target, error.message);
      return message === error.message ? error : new ToolError(error.code, message, error.retryable);
    }
    if (!(error instanceof Error) || error.name === 'AbortError' || error.name === 'TimeoutError')
      return error instanceof Error ? error : new Error(String(error));
    const detail = this.shown(target, error.message).slice(0, 300);
    return new ToolError(
      'upstream_unavailable',
      `The MCP server at ${safeHost(target.url)} could not be used: ${detail}; retry later`,
      true,
    );
  }
}

const UNSUPPORTED_PROTOCOL_VERSION = -32022;

// The server answered the POST, but not with a response to its request (an HTTP error, another revision's refusal).
class UnansweredRequest extends ToolError {}

type RpcAnswer = { result: Record<string, unknown> };

// The request envelope of the revision: its version, the client's capabilities, the client's name (Toolgate's).
function envelope(capabilities: Record<string, unknown>): Record<string, unknown> {
  return { [PROTOCOL_VERSION_META]: MODERN_REVISION, [CLIENT_CAPABILITIES_META]: capabilities, [CLIENT_INFO_META]: CLIENT_INFO };
}

// A header value as the revision sends it: printable ASCII as it is, anything else as =?base64?<UTF-8>?=.
export function headerValue(value: string): string {
  return /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value) && !value.startsWith('=?')
    ? value
    : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

// The JSON-RPC messages of an event stream: each event's data lines joined, parsed.
function eventStreamMessages(text: string): unknown[] {
  const messages: unknown[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
    if (data.length > 0) messages.push(parsed(data.join('\n')));
  }
  return messages;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const printable = (value: string): string => `'${value.replace(/[^\x20-\x7e]/g, '?').slice(0, 64)}'`;

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the configured address';
  }
}
