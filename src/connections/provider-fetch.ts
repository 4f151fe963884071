import type { CustomFetch } from 'openid-client';
import { AppError } from '../common/errors/app-error.js';
import { AddressPolicy } from '../execution/net/address-policy.js';
import { portOf, safeFetch, type FetchMethod } from '../execution/net/safe-fetch.js';

const PROVIDER_MAX_BYTES = 1024 * 1024;
const PROVIDER_TIMEOUT_MS = 10_000;
// Statuses whose answer cannot carry a body (the Response constructor refuses one).
const NULL_BODY = new Set([101, 204, 205, 304]);

// openid-client's requests (discovery, token, refresh, revocation) made by safeFetch: the address policy of
// fetch_url (no private, loopback or metadata addresses unless FETCH_ALLOW_HOSTS opens them), no redirects,
// bounded in time and size.
export function providerFetch(allowHosts: readonly string[]): CustomFetch {
  return async (url, options) => {
    const body = options.body === undefined || options.body === null ? undefined : String(options.body as string | URLSearchParams);
    const answer = await safeFetch(
      {
        url,
        method: options.method as FetchMethod,
        headers: options.headers,
        body,
        timeoutMs: PROVIDER_TIMEOUT_MS,
        maxBytes: PROVIDER_MAX_BYTES,
        signal: options.signal,
      },
      { allowHosts, maxRedirects: 0 },
    );
    const bytes = answer.bodyEncoding === 'base64' ? Buffer.from(answer.body, 'base64') : answer.body;
    return new Response(NULL_BODY.has(answer.status) ? null : bytes, {
      status: answer.status,
      statusText: answer.statusText,
      headers: answer.headers,
    });
  };
}

// Plain http is for an authorization server the operator opened by name in FETCH_ALLOW_HOSTS (a local one);
// any other must be https.
export function insecureAllowed(url: URL, allowHosts: readonly string[]): boolean {
  return url.protocol === 'http:' && new AddressPolicy(allowHosts).isOpened(url.hostname, portOf(url));
}

// openid-client wraps what its fetch threw: the address policy's own refusal (url_blocked) is told as it is.
export function policyRefusal(error: unknown): AppError | undefined {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof AppError) return cause;
  }
  return undefined;
}
