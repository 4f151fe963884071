import { maskUrl } from '../../common/secrets/secret-redaction.js';
import { ToolError } from '../tool-error.js';

// Never echo credentials back in a message (userinfo, or a query parameter such as `?api_key=`), and keep a
// 1 MB data: URL from filling one.
export function displayUrl(url: URL): string {
  if (url.username === '' && url.password === '') return clip(maskUrl(url.href));
  const shown = new URL(url.href);
  if (shown.username !== '') shown.username = '***';
  if (shown.password !== '') shown.password = '***';
  return clip(maskUrl(shown.href));
}

// A URL as the caller wrote it, which may not parse: shown as displayUrl would show it.
export const displayRawUrl = (text: string): string => clip(maskUrl(text));

export function clip(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}

const NETWORK_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  ENOTFOUND: 'the host name could not be resolved',
  EAI_AGAIN: 'the host name could not be resolved (temporary DNS failure)',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
  EPIPE: 'the connection was closed while sending',
};

export function networkError(url: URL, err: NodeJS.ErrnoException, receivedBytes?: number): ToolError {
  const code = err.code ?? '';
  const tls = /CERT|TLS|SSL/.test(code);
  const what = NETWORK_FAILURES[code] ?? (tls ? `TLS failed: ${err.message}` : err.message);
  const where =
    receivedBytes === undefined
      ? `Could not fetch ${displayUrl(url)}`
      : `The response from ${displayUrl(url)} broke off after ${receivedBytes} bytes`;
  return new ToolError('network_error', `${where}: ${what}${code && !tls ? ` (${code})` : ''}`, true);
}

export function timedOut(url: URL, timeoutMs: number): ToolError {
  return new ToolError('timeout', `No response from ${displayUrl(url)} within ${timeoutMs} ms`, true);
}

export function cancelled(): ToolError {
  return new ToolError('cancelled', 'The fetch was cancelled before it finished', false);
}
