import { ToolError } from '../tool-error.js';

// Never echo credentials back in a message, and keep a 1 MB data: URL from filling one.
export function displayUrl(url: URL): string {
  if (url.username === '' && url.password === '') return clip(url.href);
  const shown = new URL(url.href);
  if (shown.username !== '') shown.username = '***';
  if (shown.password !== '') shown.password = '***';
  return clip(shown.href);
}

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
