import { AppError } from '../../common/errors/app-error.js';
import { displayUrl } from './fetch-errors.js';

export type FetchMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HopRequest {
  url: URL;
  method: FetchMethod;
  headers: Record<string, string>;
  body?: string;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// Credentials meant for one origin must not be handed to the next one (the Fetch standard does the same).
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

export function urlBlocked(url: string, reason: string): AppError {
  return new AppError(403, 'url_blocked', `Refused to fetch ${url}: ${reason}`, { details: { url, reason } });
}

// The request to send after a response, or undefined when the response is the final one (not a redirect,
// no Location, or a Location that does not parse: the caller then sees the 3xx as it is).
export function nextHop(current: HopRequest, status: number, location: string | undefined): HopRequest | undefined {
  if (!REDIRECT_STATUSES.has(status) || location === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(location, current.url);
  } catch {
    return undefined;
  }
  if (current.url.protocol === 'https:' && url.protocol === 'http:') {
    throw urlBlocked(displayUrl(url), `the redirect from ${displayUrl(current.url)} downgrades https to http`);
  }
  // RFC 9110 15.4: 303 turns any method but HEAD into GET; 301/302 after POST do too, as every client does.
  const toGet = (status === 303 && current.method !== 'HEAD') || ((status === 301 || status === 302) && current.method === 'POST');
  const headers = { ...current.headers };
  if (toGet) {
    for (const name of Object.keys(headers)) if (name.startsWith('content-')) delete headers[name];
  }
  if (url.origin !== current.url.origin) for (const name of CREDENTIAL_HEADERS) delete headers[name];
  return { url, method: toGet ? 'GET' : current.method, headers, body: toGet ? undefined : current.body };
}
