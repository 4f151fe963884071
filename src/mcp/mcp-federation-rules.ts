import { randomUUID } from 'node:crypto';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../common/errors/app-error.js';
import type { AuthorizationRequired } from '../execution/authorization-required.js';
import { ToolError } from '../execution/tool-error.js';

// The rules McpFederation applies to what sources list and answer, apart from the service that asks them.

// `file:` URIs (any case) name workspace files.
export const isWorkspaceUri = (uri: string): boolean => /^file:/i.test(uri.trimStart());

// The entries whose key exactly one source lists; the first of each when a source lists a key twice.
export function unique<T, S>(listed: Array<{ item: T; source: S }>, keyOf: (item: T) => string): Array<{ item: T; source: S }> {
  const sources = new Map<string, Set<S>>();
  for (const { item, source } of listed) sources.set(keyOf(item), (sources.get(keyOf(item)) ?? new Set()).add(source));
  const seen = new Set<string>();
  return listed.filter(({ item }) => {
    const key = keyOf(item);
    if (sources.get(key)!.size > 1 || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// The JSON-RPC error a client gets, the audit's status and code for it.
export function asMcpFailure(
  error: unknown,
  clientGone: boolean,
): { error: unknown; status: 'error' | 'timeout'; code: string; message: string } {
  if (error instanceof McpError) {
    const timedOut = error.code === (ErrorCode.RequestTimeout as number);
    return {
      error,
      status: timedOut ? 'timeout' : 'error',
      code: timedOut ? 'upstream_timeout' : `upstream_rpc_${error.code}`,
      message: error.message,
    };
  }
  if (clientGone) {
    const message = 'The request was abandoned: the client went away';
    return { error: new McpError(ErrorCode.InternalError, message), status: 'error', code: 'client_gone', message };
  }
  if (error instanceof ToolError || error instanceof AppError) {
    const timedOut =
      error.code === 'upstream_timeout' || error.code === 'timeout' || (error instanceof Error && error.name === 'TimeoutError');
    return {
      error: new McpError(ErrorCode.InternalError, error.message, { code: error.code }),
      status: timedOut ? 'timeout' : 'error',
      code: error.code,
      message: error.message,
    };
  }
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    const message = 'The MCP source did not answer in time';
    return { error: new McpError(ErrorCode.RequestTimeout, message), status: 'timeout', code: 'upstream_timeout', message };
  }
  // Audited like any failure; the endpoint logs it and answers an internal error without its message.
  return { error, status: 'error', code: 'internal_error', message: 'An unexpected error occurred; it has been logged' };
}

// A read or a prompt that needs a connection the caller has not made: a client that declared URL-mode
// elicitation gets -32042 with the link, as tools/call answers it; any other has no isError result to take,
// so it gets the error Toolgate answers for its other refusals (-32603, data.code), the link in data and in a
// message the model can relay.
export function authorizationAnswer(required: AuthorizationRequired, elicitsUrl: boolean): McpError {
  const message = required.message;
  if (elicitsUrl)
    return new McpError(ErrorCode.UrlElicitationRequired, message, {
      elicitations: [{ mode: 'url', elicitationId: randomUUID(), url: required.authorization.url, message }],
    });
  return new McpError(ErrorCode.InternalError, message, { code: 'authorization_required', authorization: required.authorization });
}

export function asMcpError(error: unknown): never {
  if (error instanceof McpError) throw error;
  if (error instanceof ToolError || error instanceof AppError)
    throw new McpError(ErrorCode.InternalError, error.message, { code: error.code });
  throw error;
}

export const printable = (value: string): string => `'${value.replace(/[^\x20-\x7e]/g, '?').slice(0, 128)}'`;
