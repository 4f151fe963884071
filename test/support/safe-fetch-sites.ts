import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { isIP, type AddressInfo, type Socket } from 'node:net';
import { AppError } from '../../src/common/errors/app-error.js';
import { ToolError } from '../../src/execution/tool-error.js';
import { safeFetch, type Resolver, type SafeFetchPolicy, type SafeFetchRequest } from '../../src/execution/net/safe-fetch.js';

// What the safeFetch suites share: local servers (a site with the routes below, a bystander no allow-list
// names, a TLS site for tls.test), a stand-in DNS, and the checks of a refusal or a failure.

// A self-signed certificate for the name tls.test, valid until 2126:
// openssl req -x509 -newkey rsa:2048 -nodes -days 36500 -subj /CN=tls.test -addext subjectAltName=DNS:tls.test
const TLS_KEY = readFileSync(new URL('../../src/execution/net/fixtures/tls-test.key.pem', import.meta.url));
export const TLS_CERT = readFileSync(new URL('../../src/execution/net/fixtures/tls-test.cert.pem', import.meta.url));
export const MiB = 1024 * 1024;
export const GiB = 1024 * MiB;

export interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface LocalServer {
  port: number;
  origin: string;
  hits: Hit[];
  connections: number;
  close(): Promise<void>;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, hit: Hit) => void;

export async function listen(handler: Handler, options: { tls?: boolean; host?: string } = {}): Promise<LocalServer> {
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const hit: Hit = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: '' };
    state.hits.push(hit);
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (hit.body += chunk));
    req.on('end', () => handler(req, res, hit));
  };
  const server = options.tls ? https.createServer({ key: TLS_KEY, cert: TLS_CERT }, onRequest) : http.createServer(onRequest);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const state: LocalServer = {
    port,
    origin: `${options.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`,
    hits: [],
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('connection', () => state.connections++);
  return state;
}

// A stand-in for DNS: answers from the table, or ENOTFOUND; `calls` records every question.
export function fakeDns(table: Record<string, string[] | ((call: number) => string[])>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver: Resolver = async (hostname) => {
    calls.push(hostname);
    const entry = table[hostname];
    const answer = typeof entry === 'function' ? entry(calls.filter((h) => h === hostname).length) : entry;
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answer.map((address) => ({ address, family: isIP(address) }));
  };
  return Object.assign(resolver, { calls });
}

export async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value).slice(0, 200)}`);
    },
    (err: unknown) => err,
  );
}

export async function expectRefused(promise: Promise<unknown>, reason?: RegExp | string): Promise<AppError> {
  const err = await failure(promise);
  expect(err).toBeInstanceOf(AppError);
  expect(err).toMatchObject({ status: 403, code: 'url_blocked' });
  if (reason !== undefined) expect((err as AppError).message).toMatch(reason);
  return err as AppError;
}

export async function expectToolError(promise: Promise<unknown>, code: string, retryable: boolean): Promise<ToolError> {
  const err = await failure(promise);
  expect(err).toBeInstanceOf(ToolError);
  expect(err).toMatchObject({ code, retryable });
  return err as ToolError;
}

export const until = async (condition: () => boolean, ms = 2000) => {
  for (const start = Date.now(); !condition() && Date.now() - start < ms;) await new Promise((r) => setTimeout(r, 10));
};

// The streaming routes report how far they got, to show the client stopped reading.
export const stream = { sent: 0, closed: false };

function pump(res: http.ServerResponse, chunk: Buffer, limit = Infinity): void {
  stream.sent = 0;
  stream.closed = false;
  res.on('close', () => (stream.closed = true));
  const write = () => {
    while (!stream.closed && stream.sent < limit) {
      stream.sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', write);
    }
    res.end();
  };
  write();
}

export const routes: Handler = (req, res, hit) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const n = Number(url.searchParams.get('n') ?? 0);
  switch (url.pathname) {
    case '/hello':
      return void res
        .writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': '12', 'x-served-by': 'site' })
        .end('hello, agent');
    case '/echo':
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(hit));
    case '/binary':
      return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from([...Array(256).keys()]));
    case '/exact':
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(n));
    case '/redirect':
      return void res
        .writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/' })
        .end('moved');
    case '/redirect-endless':
      res.writeHead(302, { location: '/hello', 'content-type': 'text/plain' });
      return pump(res, Buffer.alloc(16 * 1024, 0x63));
    case '/hop': {
      const last = Number(url.searchParams.get('last'));
      if (n >= last) return void res.end(`arrived after ${n} redirects`);
      return void res.writeHead(302, { location: `/hop?n=${n + 1}&last=${last}` }).end();
    }
    case '/slow-hop':
      return void setTimeout(() => res.writeHead(302, { location: `/slow-hop?n=${n + 1}` }).end(), 250);
    case '/gib':
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(GiB) });
      return pump(res, Buffer.alloc(64 * 1024, 0x61), GiB);
    case '/endless':
      res.writeHead(200, { 'content-type': 'text/plain' });
      return pump(res, Buffer.alloc(16 * 1024, 0x62));
    case '/drip': {
      stream.closed = false;
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('drip\n'), 50);
      return void res.on('close', () => {
        clearInterval(timer);
        stream.closed = true;
      });
    }
    case '/silent':
      return;
    default:
      res.writeHead(404).end('no such route');
  }
};

// Starts the servers before the suite and closes them after it; their hits are cleared before each test.
export function safeFetchSites() {
  let site: LocalServer;
  let bystander: LocalServer;
  let tlsSite: LocalServer;
  let policy: SafeFetchPolicy;

  beforeAll(async () => {
    site = await listen(routes);
    // Loopback too, but on a port no allow-list names: whatever is refused must never reach it.
    bystander = await listen((_req, res) => res.end('reached'));
    tlsSite = await listen(
      (req, res) => {
        const socket = req.socket as Socket & { servername?: string };
        if (req.url === '/down') return void res.writeHead(302, { location: `${site.origin}/hello` }).end();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ servername: socket.servername, host: req.headers.host }));
      },
      { tls: true },
    );
    policy = { allowHosts: [`127.0.0.1:${site.port}`], maxRedirects: 5 };
  });

  beforeEach(() => {
    for (const server of [site, bystander, tlsSite]) {
      server.hits = [];
      server.connections = 0;
    }
  });

  afterAll(async () => {
    await Promise.all([site, bystander, tlsSite].map((server) => server.close()));
  });

  const fetchUrl = (url: string, request: Partial<SafeFetchRequest> = {}, overrides: Partial<SafeFetchPolicy> = {}) =>
    safeFetch({ url, method: 'GET', timeoutMs: 5000, maxBytes: MiB, ...request }, { ...policy, ...overrides });

  return {
    get site() {
      return site;
    },
    get bystander() {
      return bystander;
    },
    get tlsSite() {
      return tlsSite;
    },
    fetchUrl,
  };
}
