import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { RESULT_MAX_DEPTH } from '../../common/json/bounded-json.js';
import { displayUrl } from '../../execution/net/fetch-errors.js';
import { safeFetch } from '../../execution/net/safe-fetch.js';
import { ToolError } from '../../execution/tool-error.js';
import { upstreamAnswerNestsDeeperThan } from './upstream-answer-caps.js';

export interface GuardedFetchOptions {
  allowHosts: readonly string[];
  // Per HTTP exchange with the upstream: the answer is read whole, within these.
  timeoutMs: number;
  maxBytes: number;
  // Rewrites an answer of at least LARGE_ANSWER_BYTES before the SDK parses it (null: keep it as it came).
  reshapeLargeAnswer?: (body: Buffer, contentType: string) => Promise<string | null>;
}

// Below this, parsing on the event loop costs well under a millisecond; above it, the answer is handed to
// reshapeLargeAnswer (a pool thread) first.
export const LARGE_ANSWER_BYTES = 64 * 1024;

// Past this depth an answer is refused before it is parsed. Parsing, and the walks that measure a result
// against the cap on results (RESULT_MAX_DEPTH, 256), cost little at a few thousand levels and seconds of
// the event loop at hundreds of thousands. Between the two, what passes here meets the finer caps after the
// parse: a listed entry too deep is left out of its listing, a result too deep is the tool's error.
export const PARSE_MAX_DEPTH = 10_000;

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

// The fetch the SDK client uses to reach an upstream MCP server: every request goes through safeFetch,
// so the fetch_url address policy holds on every connection (resolved each time: a DNS change cannot
// slip a private address in), no redirect is followed, and each answer is bounded in time and size.
// The server-initiated stream (GET) is never opened: Toolgate only sends requests, and a stream that
// never ends would hold a connection for nothing.
export function guardedMcpFetch(options: GuardedFetchOptions): FetchLike {
  return async (url, init = {}) => {
    const method = (init.method ?? 'GET').toUpperCase();
    if (method === 'GET') return new Response(null, { status: 405 });
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    const response = await safeFetch(
      {
        url: String(url),
        method: method as 'POST' | 'DELETE',
        headers,
        body: typeof init.body === 'string' ? init.body : undefined,
        timeoutMs: options.timeoutMs,
        maxBytes: options.maxBytes,
        signal: init.signal ?? undefined,
      },
      { allowHosts: options.allowHosts, maxRedirects: 0 },
    );
    // The server's address as a message may show it: a credential in its query (`?api_key=`) masked.
    const shown = displayUrl(new URL(response.url));
    if (response.timedOut)
      throw new ToolError('upstream_timeout', `The MCP server at ${shown} did not answer within ${options.timeoutMs} ms`, true);
    if (response.truncated) {
      throw new ToolError(
        'upstream_too_large',
        `The MCP server at ${shown} answered more than ${options.maxBytes} bytes; the answer was dropped`,
        false,
      );
    }
    const body = NULL_BODY_STATUSES.has(response.status) ? null : Buffer.from(response.body, response.bodyEncoding);
    const contentType = String(response.headers['content-type'] ?? '');
    // An event stream that ended without the request's response (the upstream dropped it mid-call): the SDK
    // would wait for a resumption that a stateless relay never asks for, until the tool's deadline. Said now.
    const sent = requestOf(init.body);
    if (
      sent !== null &&
      body !== null &&
      response.status === 200 &&
      /^text\/event-stream/i.test(contentType) &&
      !answersRequest(body, sent.id)
    ) {
      throw new ToolError(
        'upstream_stream_closed',
        `The MCP server at ${shown} closed its event stream before it answered ${sent.method}; the call's outcome there is unknown`,
        true,
      );
    }
    // Too deep to carry, refused before anyone parses it: parsing a text nested hundreds of thousands of
    // levels would hold the event loop (every tenant's requests) for a second or more, only to drop it after.
    if (body !== null && upstreamAnswerNestsDeeperThan({ body: body.toString('utf8'), contentType }, PARSE_MAX_DEPTH)) {
      const what =
        sent?.method === 'tools/call'
          ? `The tool ran, but its result from the MCP server at ${shown} is`
          : `The MCP server at ${shown} answered ${sent?.method ?? 'a request'} with JSON`;
      throw new ToolError(
        'result_too_deep',
        `${what} nested more than ${RESULT_MAX_DEPTH} levels deep (the cap on results), so it was dropped`,
        false,
      );
    }
    const reshaped =
      body && body.length >= LARGE_ANSWER_BYTES && options.reshapeLargeAnswer ? await options.reshapeLargeAnswer(body, contentType) : null;
    if (reshaped !== null) {
      const { 'content-length': _stale, ...rest } = response.headers;
      return new Response(reshaped, { status: response.status, headers: rest });
    }
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

// The JSON-RPC request a POST carries (a single message with an id), or null for a notification or a response.
function requestOf(body: unknown): { id: string | number; method: string } | null {
  if (typeof body !== 'string') return null;
  try {
    const message = JSON.parse(body) as { id?: unknown; method?: unknown };
    if ((typeof message.id === 'string' || typeof message.id === 'number') && typeof message.method === 'string')
      return { id: message.id, method: message.method };
  } catch {
    // Not JSON: the SDK sent it; it is the upstream's to refuse.
  }
  return null;
}

// Whether an event stream holds a JSON-RPC response (result or error) to the request `id`. Read as text, not
// parsed: the answer may be large, and the SDK parses it next.
function answersRequest(stream: Buffer, id: string | number): boolean {
  const idPattern = new RegExp(`"id"\\s*:\\s*${JSON.stringify(id).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*[,}]`);
  for (const event of stream.toString('utf8').split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5))
      .join('\n');
    if (/"(result|error)"\s*:/.test(data) && idPattern.test(data)) return true;
  }
  return false;
}
