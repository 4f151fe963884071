import { lookup as systemLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { type AppError, badRequest } from '../../common/errors/app-error.js';
import { AddressPolicy } from './address-policy.js';
import { nextHop, urlBlocked, type FetchMethod, type HopRequest } from './redirect-policy.js';
import { encodeBody, readBody } from './response-body.js';
import { cancelled, clip, displayRawUrl, displayUrl, networkError, timedOut } from './fetch-errors.js';

export type { FetchMethod } from './redirect-policy.js';

export interface SafeFetchRequest {
  url: string;
  method: FetchMethod;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

// Answers every address of a host name at once; tests inject one to play DNS.
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface SafeFetchPolicy {
  allowHosts: readonly string[];
  maxRedirects: number;
  lookup?: Resolver;
  // Extra trusted CA certificates (PEM) for https, e.g. a private PKI.
  ca?: string | Buffer;
  // Waited for before the body is decoded, which takes the main thread for milliseconds per MiB: the
  // caller's turn among other tenants' (FairTurns).
  beforeDecode?: () => Promise<void>;
}

export interface SafeFetchResponse {
  url: string;
  finalUrl: string;
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: string;
  bodyEncoding: 'utf8' | 'base64';
  bytes: number;
  truncated: boolean;
  timedOut: boolean;
  redirects: string[];
}

const USER_AGENT = 'Toolgate-fetch/1';
// Headers that address the connection or frame the message: the gateway owns those, a caller never needs them.
const REFUSED_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'content-length',
  'expect',
]);
const METHODS = new Set<string>(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']);
const TIMEOUT = Symbol('timeout');
const CANCELLED = Symbol('cancelled');

interface HopContext {
  addresses: AddressPolicy;
  resolve: Resolver;
  ca?: string | Buffer;
  signal: AbortSignal;
  timeoutMs: number;
}

const systemResolver: Resolver = async (hostname) =>
  (await systemLookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family }));

export async function safeFetch(request: SafeFetchRequest, policy: SafeFetchPolicy): Promise<SafeFetchResponse> {
  const first = parseRequest(request);
  const controller = new AbortController();
  const onCancel = () => controller.abort(CANCELLED);
  if (request.signal?.aborted) throw cancelled();
  request.signal?.addEventListener('abort', onCancel, { once: true });
  const timer = setTimeout(() => controller.abort(TIMEOUT), request.timeoutMs);
  const ctx: HopContext = {
    addresses: new AddressPolicy(policy.allowHosts),
    resolve: policy.lookup ?? systemResolver,
    ca: policy.ca,
    signal: controller.signal,
    timeoutMs: request.timeoutMs,
  };
  const redirects: string[] = [];
  try {
    for (let hop = first; ;) {
      assertUrlAllowed(hop.url, ctx.addresses);
      const res = await send(hop, ctx);
      let next: HopRequest | undefined;
      try {
        next = nextHop(hop, res.statusCode ?? 0, res.headers.location);
        if (next && redirects.length >= policy.maxRedirects) {
          const reason = `more than ${policy.maxRedirects} redirects (starting from ${displayUrl(first.url)})`;
          throw urlBlocked(displayUrl(next.url), reason);
        }
      } catch (err) {
        discard(res);
        throw err;
      }
      if (!next) {
        const read = await readBody(res, hop.url, request.maxBytes, ctx.signal, (reason) => reason === TIMEOUT);
        await policy.beforeDecode?.();
        return {
          url: first.url.href,
          finalUrl: hop.url.href,
          status: res.statusCode ?? 0,
          statusText: res.statusMessage ?? '',
          headers: flattenHeaders(res.headers),
          ...encodeBody(read.bytes, res.headers['content-type']),
          bytes: read.bytes.length,
          truncated: read.truncated,
          timedOut: read.timedOut,
          redirects,
        };
      }
      discard(res);
      redirects.push(next.url.href);
      hop = next;
    }
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener('abort', onCancel);
  }
}

function parseRequest(request: SafeFetchRequest): HopRequest {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    throw badRequest('invalid_url', `${displayRawUrl(request.url)} is not a valid absolute URL`, { url: displayRawUrl(request.url) });
  }
  if (!METHODS.has(request.method)) {
    throw badRequest('invalid_request', `The method ${clip(String(request.method))} is not supported`);
  }
  if (request.body !== undefined && (request.method === 'GET' || request.method === 'HEAD')) {
    throw badRequest('invalid_request', `A ${request.method} request cannot carry a body`);
  }
  if (!(request.timeoutMs > 0) || !(request.maxBytes >= 0)) {
    throw badRequest('invalid_request', 'timeoutMs must be positive and maxBytes not negative');
  }
  return { url, method: request.method, headers: requestHeaders(request.headers), body: request.body };
}

function requestHeaders(input: Record<string, string> | undefined): Record<string, string> {
  const headers: Record<string, string> = { 'user-agent': USER_AGENT };
  for (const [given, value] of Object.entries(input ?? {})) {
    const name = given.toLowerCase();
    if (REFUSED_HEADERS.has(name)) {
      const message = `The ${given} header cannot be set; the gateway manages it`;
      throw badRequest('header_not_allowed', message, { header: given });
    }
    try {
      http.validateHeaderName(name);
      http.validateHeaderValue(name, value);
    } catch {
      const message = `The ${clip(given)} header has an invalid name or value (control characters?)`;
      throw badRequest('invalid_header', message, { header: clip(given) });
    }
    headers[name] = value;
  }
  // The body is returned as received, so ask for it uncompressed: no decoding, and no decompression bomb.
  headers['accept-encoding'] = 'identity';
  return headers;
}

export function assertUrlAllowed(url: URL, addresses: AddressPolicy): void {
  const shown = displayUrl(url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw urlBlocked(shown, `the ${url.protocol} scheme is not allowed; only http: and https: are`);
  }
  const verdict = addresses.checkHost(url.hostname, portOf(url));
  if (!verdict.allowed) throw urlBlocked(shown, verdict.reason ?? 'the host is not allowed');
  // Userinfo is where parsers disagree about which part is the host; a caller can send an Authorization header.
  if (url.username !== '' || url.password !== '') {
    throw urlBlocked(shown, 'URLs with credentials (user@host) are not allowed; send an Authorization header instead');
  }
}

function send(hop: HopRequest, ctx: HopContext): Promise<http.IncomingMessage> {
  const { url } = hop;
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const port = portOf(url);
  let refusal: AppError | undefined;
  const refuse = (reason = 'the address is not allowed') => (refusal = urlBlocked(displayUrl(url), reason));

  // Node calls this for host names (not for IP literals, which assertUrlAllowed has judged). Every answer is
  // checked, and node connects to one of exactly these answers: there is no second resolution to rebind.
  const lookup: LookupFunction = (host, options, callback) => {
    ctx.resolve(host).then(
      (answers) => {
        for (const { address } of answers) {
          const verdict = ctx.addresses.checkResolved(url.hostname, port, address);
          if (!verdict.allowed) return callback(refuse(verdict.reason), '', 0);
        }
        const wanted = familyOf(options.family);
        const usable = answers
          .map(({ address }) => ({ address, family: isIP(address) }))
          .filter((a) => wanted === 0 || a.family === wanted);
        if (usable.length === 0) {
          return callback(Object.assign(new Error(`no address found for ${host}`), { code: 'ENOTFOUND' }), '', 0);
        }
        if (options.all) callback(null, usable);
        else callback(null, usable[0].address, usable[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };

  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request({
      protocol: url.protocol,
      host: hostname,
      port,
      method: hop.method,
      path: `${url.pathname}${url.search}`,
      headers: { ...hop.headers, host: url.host, ...contentLength(hop) },
      // A fresh connection per hop: a pooled socket would skip the checks below.
      agent: false,
      lookup,
      // The name, not the address connected to, is what the certificate and the virtual host are for.
      servername: isIP(hostname) ? undefined : hostname,
      ca: ctx.ca,
    });
    const onAbort = () => req.destroy(new Error('aborted'));
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    req.once('socket', (socket: Socket) => {
      // Last guard: the peer actually connected to. Nothing is written before it passes.
      const onConnect = () => {
        if (socket.destroyed) return void req.destroy(Object.assign(new Error('closed'), { code: 'ECONNRESET' }));
        const verdict = ctx.addresses.checkResolved(url.hostname, port, socket.remoteAddress ?? '');
        if (verdict.allowed) req.end(hop.body);
        else req.destroy(refuse(verdict.reason));
      };
      if (socket.connecting) socket.once('connect', onConnect);
      else onConnect();
    });
    req.once('response', (res) => {
      ctx.signal.removeEventListener('abort', onAbort);
      resolve(res);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      ctx.signal.removeEventListener('abort', onAbort);
      if (refusal) reject(refusal);
      else if (ctx.signal.aborted) reject(ctx.signal.reason === TIMEOUT ? timedOut(url, ctx.timeoutMs) : cancelled());
      else reject(networkError(url, err));
    });
    if (ctx.signal.aborted) onAbort();
  });
}

// A redirect's own body is of no use; closing the socket also stops an endless one. The close may still
// report the body as aborted, which is expected here.
function discard(res: http.IncomingMessage): void {
  res.on('error', () => undefined);
  res.destroy();
}

function contentLength(hop: HopRequest): Record<string, string> {
  return hop.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(hop.body)) };
}

function flattenHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(name === 'set-cookie' ? '\n' : ', ') : value;
  }
  return flat;
}

function familyOf(family: number | 'IPv4' | 'IPv6' | undefined): number {
  return family === 'IPv4' ? 4 : family === 'IPv6' ? 6 : (family ?? 0);
}

export function portOf(url: URL): number {
  return url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}
