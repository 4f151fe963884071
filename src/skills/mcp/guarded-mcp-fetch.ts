import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { displayUrl } from '../../execution/net/fetch-errors.js';
import { safeFetch } from '../../execution/net/safe-fetch.js';
import { ToolError } from '../../execution/tool-error.js';

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
    if (response.timedOut) throw new ToolError('upstream_timeout', `The MCP server at ${shown} did not answer within ${options.timeoutMs} ms`, true);
    if (response.truncated) {
      throw new ToolError('upstream_too_large', `The MCP server at ${shown} answered more than ${options.maxBytes} bytes; the answer was dropped`, false);
    }
    const body = NULL_BODY_STATUSES.has(response.status) ? null : Buffer.from(response.body, response.bodyEncoding);
    const contentType = String(response.headers['content-type'] ?? '');
    const reshaped = body && body.length >= LARGE_ANSWER_BYTES && options.reshapeLargeAnswer ? await options.reshapeLargeAnswer(body, contentType) : null;
    if (reshaped !== null) {
      const { 'content-length': _stale, ...rest } = response.headers;
      return new Response(reshaped, { status: response.status, headers: rest });
    }
    return new Response(body, { status: response.status, headers: response.headers });
  };
}
