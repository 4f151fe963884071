import dc from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { isIP, type AddressInfo, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { AppError } from '../../common/errors/app-error.js';
import { ToolError } from '../tool-error.js';
import { safeFetch, type Resolver, type SafeFetchPolicy, type SafeFetchRequest } from './safe-fetch.js';

// A self-signed certificate for the name tls.test, valid until 2126:
// openssl req -x509 -newkey rsa:2048 -nodes -days 36500 -subj /CN=tls.test -addext subjectAltName=DNS:tls.test
const TLS_KEY = readFileSync(new URL('./fixtures/tls-test.key.pem', import.meta.url));
const TLS_CERT = readFileSync(new URL('./fixtures/tls-test.cert.pem', import.meta.url));
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface LocalServer {
  port: number;
  origin: string;
  hits: Hit[];
  connections: number;
  close(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, hit: Hit) => void;

async function listen(handler: Handler, options: { tls?: boolean; host?: string } = {}): Promise<LocalServer> {
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
function fakeDns(table: Record<string, string[] | ((call: number) => string[])>): Resolver & { calls: string[] } {
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

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value).slice(0, 200)}`);
    },
    (err: unknown) => err,
  );
}

async function expectRefused(promise: Promise<unknown>, reason?: RegExp | string): Promise<AppError> {
  const err = await failure(promise);
  expect(err).toBeInstanceOf(AppError);
  expect(err).toMatchObject({ status: 403, code: 'url_blocked' });
  if (reason !== undefined) expect((err as AppError).message).toMatch(reason);
  return err as AppError;
}

async function expectToolError(promise: Promise<unknown>, code: string, retryable: boolean): Promise<ToolError> {
  const err = await failure(promise);
  expect(err).toBeInstanceOf(ToolError);
  expect(err).toMatchObject({ code, retryable });
  return err as ToolError;
}

const until = async (condition: () => boolean, ms = 2000) => {
  for (const start = Date.now(); !condition() && Date.now() - start < ms; ) await new Promise((r) => setTimeout(r, 10));
};

// The streaming routes report how far they got, to show the client stopped reading.
const stream = { sent: 0, closed: false };

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

const routes: Handler = (req, res, hit) => {
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

describe('safeFetch, allowed requests', () => {
  it('GETs a text page with the default User-Agent, the Host header and no fragment', async () => {
    const result = await fetchUrl(`${site.origin}/echo?x=1#section`);
    const seen = JSON.parse(result.body) as Hit;
    expect(seen).toMatchObject({ method: 'GET', url: '/echo?x=1' });
    expect(seen.headers).toMatchObject({ 'user-agent': 'Toolgate-fetch/1', host: `127.0.0.1:${site.port}` });
    expect(result).toMatchObject({ status: 200, statusText: 'OK', bodyEncoding: 'utf8', truncated: false, redirects: [] });
  });

  it('returns status, headers and a UTF-8 body', async () => {
    const result = await fetchUrl(`${site.origin}/hello`);
    expect(result).toMatchObject({
      url: `${site.origin}/hello`,
      finalUrl: `${site.origin}/hello`,
      status: 200,
      body: 'hello, agent',
      bodyEncoding: 'utf8',
      bytes: 12,
      truncated: false,
      timedOut: false,
    });
    expect(result.headers).toMatchObject({ 'content-type': 'text/plain; charset=utf-8', 'x-served-by': 'site' });
  });

  it('POSTs a JSON body with its content type and length', async () => {
    const payload = JSON.stringify({ query: 'weather', units: 'métric' });
    const result = await fetchUrl(`${site.origin}/echo`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Request': 'abc' },
      body: payload,
    });
    const seen = JSON.parse(result.body) as Hit;
    expect(seen).toMatchObject({ method: 'POST', body: payload });
    expect(seen.headers).toMatchObject({
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(payload)),
      'x-request': 'abc',
    });
  });

  it('lets the caller set its own User-Agent', async () => {
    const result = await fetchUrl(`${site.origin}/echo`, { headers: { 'User-Agent': 'my-agent/2' } });
    expect((JSON.parse(result.body) as Hit).headers['user-agent']).toBe('my-agent/2');
  });

  it('sends a HEAD and returns the headers without a body', async () => {
    const result = await fetchUrl(`${site.origin}/hello`, { method: 'HEAD' });
    expect(result).toMatchObject({ status: 200, body: '', bytes: 0, truncated: false });
    expect(result.headers['content-length']).toBe('12');
    expect(site.hits.map((h) => h.method)).toEqual(['HEAD']);
  });

  it('returns a binary body as base64', async () => {
    const result = await fetchUrl(`${site.origin}/binary`);
    expect(result.bodyEncoding).toBe('base64');
    expect(Buffer.from(result.body, 'base64')).toEqual(Buffer.from([...Array(256).keys()]));
    expect(result.bytes).toBe(256);
  });

  it('follows a redirect on the same allowed host and lists it', async () => {
    const result = await fetchUrl(`${site.origin}/redirect?to=/hello`);
    expect(result).toMatchObject({
      status: 200,
      body: 'hello, agent',
      finalUrl: `${site.origin}/hello`,
      redirects: [`${site.origin}/hello`],
    });
  });

  it('follows a redirect whose own body never ends', async () => {
    const result = await fetchUrl(`${site.origin}/redirect-endless`);
    expect(result).toMatchObject({ status: 200, body: 'hello, agent', truncated: false });
    await until(() => stream.closed);
    expect(stream.closed).toBe(true);
  });

  it('turns a POST answered with 303 into a GET without a body', async () => {
    const result = await fetchUrl(`${site.origin}/redirect?status=303&to=/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    const seen = JSON.parse(result.body) as Hit;
    expect(seen).toMatchObject({ method: 'GET', body: '' });
    expect(seen.headers).not.toHaveProperty('content-type');
  });

  it('keeps the method and body across a 307', async () => {
    const result = await fetchUrl(`${site.origin}/redirect?status=307&to=/echo`, { method: 'PUT', body: 'keep me' });
    expect(JSON.parse(result.body)).toMatchObject({ method: 'PUT', body: 'keep me' });
  });

  it('does not mark a body of exactly maxBytes as truncated', async () => {
    const result = await fetchUrl(`${site.origin}/exact?n=1000`, { maxBytes: 1000 });
    expect(result).toMatchObject({ bytes: 1000, truncated: false });
  });

  it('fetches over https, with the host name as SNI and Host although it connects to the checked address', async () => {
    const dns = fakeDns({ 'tls.test': ['127.0.0.1'] });
    const result = await fetchUrl(`https://tls.test:${tlsSite.port}/`, {}, {
      allowHosts: [`tls.test:${tlsSite.port}`],
      lookup: dns,
      ca: TLS_CERT,
    });
    expect(JSON.parse(result.body)).toEqual({ servername: 'tls.test', host: `tls.test:${tlsSite.port}` });
    expect(dns.calls).toEqual(['tls.test']);
  });

  const hasIpv6Loopback = Object.values(networkInterfaces()).some((list) => list?.some((i) => i.address === '::1'));
  (hasIpv6Loopback ? it : it.skip)('fetches an allowed IPv6 literal', async () => {
    const v6 = await listen(routes, { host: '::1' });
    try {
      const result = await fetchUrl(`http://[::1]:${v6.port}/hello`, {}, { allowHosts: [`[::1]:${v6.port}`] });
      expect(result.body).toBe('hello, agent');
      expect(v6.hits[0].headers.host).toBe(`[::1]:${v6.port}`);
    } finally {
      await v6.close();
    }
  });
});

describe('safeFetch, failures of the network', () => {
  it('reports a refused connection as a retryable network_error', async () => {
    const closed = await listen(routes);
    await closed.close();
    const err = await expectToolError(
      fetchUrl(`http://127.0.0.1:${closed.port}/`, {}, { allowHosts: [`127.0.0.1:${closed.port}`] }),
      'network_error',
      true,
    );
    expect(err.message).toMatch(/connection was refused \(ECONNREFUSED\)/);
  });

  it('reports a name that does not resolve as a network_error', async () => {
    const err = await expectToolError(
      fetchUrl('http://nowhere.example.test/', {}, { lookup: fakeDns({}) }),
      'network_error',
      true,
    );
    expect(err.message).toMatch(/could not be resolved/);
  });

  it('reports a name with no addresses as a network_error', async () => {
    await expectToolError(fetchUrl('http://empty.example.test/', {}, { lookup: fakeDns({ 'empty.example.test': [] }) }), 'network_error', true);
  });

  it('reports an untrusted certificate as a network_error', async () => {
    const err = await expectToolError(
      fetchUrl(`https://tls.test:${tlsSite.port}/`, {}, {
        allowHosts: [`tls.test:${tlsSite.port}`],
        lookup: fakeDns({ 'tls.test': ['127.0.0.1'] }),
      }),
      'network_error',
      true,
    );
    expect(err.message).toMatch(/TLS failed/);
  });

  it('answers timeout when no response comes before the deadline', async () => {
    const started = Date.now();
    const err = await expectToolError(fetchUrl(`${site.origin}/silent`, { timeoutMs: 300 }), 'timeout', true);
    expect(err.message).toMatch(/within 300 ms/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('counts the deadline over every hop, not per hop', async () => {
    await expectToolError(fetchUrl(`${site.origin}/slow-hop?n=0`, { timeoutMs: 600 }), 'timeout', true);
    expect(site.hits.length).toBeGreaterThanOrEqual(2);
    expect(site.hits.length).toBeLessThanOrEqual(3);
  });

  it('counts DNS inside the deadline', async () => {
    const hanging: Resolver = () => new Promise(() => undefined);
    await expectToolError(fetchUrl('http://slow-dns.example.test/', { timeoutMs: 200 }, { lookup: hanging }), 'timeout', true);
  });

  it('never connects with a DNS answer that arrives after the deadline', async () => {
    const late: Resolver = () => new Promise((resolve) => setTimeout(() => resolve([{ address: '127.0.0.1', family: 4 }]), 200));
    const allowLate = { allowHosts: [`late.example.test:${site.port}`], lookup: late };
    await expectToolError(fetchUrl(`http://late.example.test:${site.port}/hello`, { timeoutMs: 50 }, allowLate), 'timeout', true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(site.connections).toBe(0);
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await expectToolError(fetchUrl(`${site.origin}/silent`, { signal: controller.signal }), 'cancelled', false);
    await expectToolError(fetchUrl(`${site.origin}/hello`, { signal: AbortSignal.abort() }), 'cancelled', false);
  });
});

describe('safeFetch, invalid requests', () => {
  it.each(['Host', 'Connection', 'Transfer-Encoding', 'TE', 'Upgrade', 'Content-Length', 'Proxy-Authorization'])(
    'refuses to let the caller set %s',
    async (header) => {
      const err = await failure(fetchUrl(`${site.origin}/echo`, { headers: { [header]: 'evil.example' } }));
      expect(err).toMatchObject({ status: 400, code: 'header_not_allowed', details: { header } });
      expect(site.connections).toBe(0);
    },
  );

  it('refuses a header value carrying a line break (request splitting)', async () => {
    const err = await failure(fetchUrl(`${site.origin}/echo`, { headers: { 'X-A': 'b\r\nHost: evil.example' } }));
    expect(err).toMatchObject({ status: 400, code: 'invalid_header' });
    expect(site.connections).toBe(0);
  });

  it('refuses a method outside the six it knows', async () => {
    const request = { method: 'CONNECT' } as unknown as Partial<SafeFetchRequest>;
    await expect(fetchUrl(`${site.origin}/echo`, request)).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
  });

  it('refuses a GET with a body and a URL that does not parse', async () => {
    await expect(fetchUrl(`${site.origin}/echo`, { body: 'x' })).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
    await expect(fetchUrl('not a url')).rejects.toMatchObject({ status: 400, code: 'invalid_url' });
  });
});

describe('fetch_url hostile inputs (security-cases.md 18-26)', () => {
  const neverAsked = () => fakeDns({});

  it.each(['http://169.254.169.254/latest/meta-data/', 'http://169.254.169.254:{port}/'])(
    '[sec-18] refuses %s as a metadata address',
    async (template) => {
      const dns = neverAsked();
      const url = template.replace('{port}', String(bystander.port));
      await expectRefused(fetchUrl(url, {}, { lookup: dns }), '169.254.169.254 is a link-local/cloud metadata address');
      expect(dns.calls).toEqual([]);
    },
  );

  it('[sec-18] refuses http://[fd00:ec2::254]/ (the AWS IPv6 metadata address)', async () => {
    const err = await expectRefused(fetchUrl('http://[fd00:ec2::254]/latest/meta-data/'), /fd00:ec2::254 is a unique-local\/cloud metadata/);
    expect(err.details).toEqual({ url: 'http://[fd00:ec2::254]/latest/meta-data/', reason: expect.any(String) });
  });

  it.each(['metadata.google.internal', 'metadata', 'metadata.google.internal.'])(
    '[sec-18] refuses http://%s/ by name, without asking DNS',
    async (host) => {
      const dns = neverAsked();
      await expectRefused(fetchUrl(`http://${host}/computeMetadata/v1/`, {}, { lookup: dns }));
      expect(dns.calls).toEqual([]);
    },
  );

  it('[sec-18] refuses a name that resolves to the metadata address, even when the name is allowed', async () => {
    const dns = fakeDns({ 'meta.example.test': ['169.254.169.254'] });
    await expectRefused(fetchUrl('http://meta.example.test/', {}, { lookup: dns }), /resolves to 169\.254\.169\.254/);
    await expectRefused(
      fetchUrl('http://meta.example.test/', {}, { lookup: dns, allowHosts: ['meta.example.test'] }),
      /cloud metadata/,
    );
  });

  it.each(['2130706433', '0x7f.1', '017700000001', '127.1', '0x7f000001', '127.0.1', '0177.0.0.1'])(
    '[sec-19] refuses http://%s/ (127.0.0.1 in another spelling)',
    async (host) => {
      const dns = neverAsked();
      await expectRefused(fetchUrl(`http://${host}/`, {}, { lookup: dns }), '127.0.0.1 is a loopback address');
      await expectRefused(fetchUrl(`http://${host}:${bystander.port}/`, {}, { lookup: dns }), '127.0.0.1 is a loopback');
      expect(dns.calls).toEqual([]);
      expect(bystander.connections).toBe(0);
    },
  );

  it.each([
    ['[::ffff:7f00:1]', /IPv4-mapped form of 127\.0\.0\.1/],
    ['[::ffff:127.0.0.1]', /IPv4-mapped form of 127\.0\.0\.1/],
    ['[::1]', /::1 is a loopback address/],
    ['[0:0:0:0:0:0:0:1]', /::1 is a loopback address/],
    ['[::]', /unspecified/],
    ['[::127.0.0.1]', /IPv4-compatible form of 127\.0\.0\.1/],
    ['[64:ff9b::a9fe:a9fe]', /NAT64 form of 169\.254\.169\.254, a link-local\/cloud metadata/],
    ['[64:ff9b::127.0.0.1]', /NAT64 form of 127\.0\.0\.1/],
    ['[2002:7f00:1::]', /6to4 form of 127\.0\.0\.1/],
    ['[2002:a9fe:a9fe::1]', /6to4 form of 169\.254\.169\.254/],
    ['[2001:0:4136:e378:8000:63bf:3fff:fdd2]', /Teredo/],
    ['[fe80::1]', /link-local/],
  ])('[sec-20] refuses http://%s/', async (host, reason) => {
    await expectRefused(fetchUrl(`http://${host}:${bystander.port}/`), reason);
    expect(bystander.connections).toBe(0);
  });

  it.each(['10.1.2.3', '127.0.0.1', '192.168.0.10', '172.20.0.5', '100.64.1.1', '::1', 'fd12::1'])(
    '[sec-21] refuses at connect time a name that resolves to %s',
    async (address) => {
      const dns = fakeDns({ 'internal.example.test': [address] });
      const err = await expectRefused(
        fetchUrl(`http://internal.example.test:${bystander.port}/`, {}, { lookup: dns }),
        `internal.example.test resolves to ${address}`,
      );
      expect(err.details).toMatchObject({ url: `http://internal.example.test:${bystander.port}/` });
      expect(dns.calls).toEqual(['internal.example.test']);
      expect(bystander.connections).toBe(0);
    },
  );

  it('[sec-21] refuses a name resolving to the allowed address: the allow-list opens the host as written', async () => {
    const dns = fakeDns({ 'alias.example.test': ['127.0.0.1'] });
    await expectRefused(fetchUrl(`http://alias.example.test:${site.port}/hello`, {}, { lookup: dns }), /resolves to 127\.0\.0\.1/);
    expect(site.connections).toBe(0);
  });

  it('[sec-22] refuses a name whose answer holds a public address first and a private one after it', async () => {
    const dns = fakeDns({ 'rebind.example.test': ['93.184.216.34', '127.0.0.1'] });
    await expectRefused(fetchUrl(`http://rebind.example.test:${bystander.port}/`, {}, { lookup: dns }), /resolves to 127\.0\.0\.1/);
    expect(bystander.connections).toBe(0);
  });

  it('[sec-22] resolves once per connection, so a rebinding answer never reaches the private address', async () => {
    // First answer public, every later one private: a client that checks one answer and connects with another loses.
    const dns = fakeDns({ 'rebind.example.test': (call) => (call === 1 ? ['93.184.216.34'] : ['127.0.0.1']) });
    const connectedTo: string[] = [];
    // Watch the address each client socket is about to connect to, and stop it there: no packet leaves the host.
    const onSocket = (message: unknown) => {
      const { socket } = message as { socket: Socket };
      socket.once('lookup', (_err: Error | null, address: string) => {
        connectedTo.push(address);
        socket.destroy();
      });
    };
    dc.subscribe('net.client.socket', onSocket);
    try {
      const url = `http://rebind.example.test:${bystander.port}/`;
      await expectToolError(fetchUrl(url, {}, { lookup: dns }), 'network_error', true);
      expect(dns.calls).toHaveLength(1);
      expect(connectedTo).toEqual(['93.184.216.34']);
      await expectRefused(fetchUrl(url, {}, { lookup: dns }), /resolves to 127\.0\.0\.1/);
      expect(dns.calls).toHaveLength(2);
      expect(connectedTo).toEqual(['93.184.216.34']);
    } finally {
      dc.unsubscribe('net.client.socket', onSocket);
    }
    expect(bystander.connections).toBe(0);
  });

  it.each([
    'http://127.0.0.1:{port}/',
    'http://localhost:{port}/',
    'http://[::ffff:127.0.0.1]:{port}/',
    'http://0x7f000001:{port}/',
    'http://169.254.169.254/latest/meta-data/',
  ])('[sec-23] refuses a redirect from an allowed site to %s', async (template) => {
    const target = template.replace('{port}', String(bystander.port));
    await expectRefused(fetchUrl(`${site.origin}/redirect?to=${encodeURIComponent(target)}`));
    expect(site.hits).toHaveLength(1);
    expect(bystander.connections).toBe(0);
  });

  it('[sec-23] refuses a redirect to a name that resolves to a private address', async () => {
    const dns = fakeDns({ 'next.example.test': ['10.0.0.7'] });
    const to = encodeURIComponent(`http://next.example.test:${bystander.port}/`);
    await expectRefused(fetchUrl(`${site.origin}/redirect?to=${to}`, {}, { lookup: dns }), /resolves to 10\.0\.0\.7/);
  });

  it('[sec-23] refuses an https -> http downgrade, even to an allowed host', async () => {
    const err = await expectRefused(
      fetchUrl(`https://tls.test:${tlsSite.port}/down`, {}, {
        allowHosts: [`tls.test:${tlsSite.port}`, `127.0.0.1:${site.port}`],
        lookup: fakeDns({ 'tls.test': ['127.0.0.1'] }),
        ca: TLS_CERT,
      }),
      /downgrades https to http/,
    );
    expect(err.details).toMatchObject({ url: `${site.origin}/hello` });
    expect(tlsSite.hits).toHaveLength(1);
    expect(site.connections).toBe(0);
  });

  it('[sec-23] refuses a chain of 6 redirects and never requests the 7th URL', async () => {
    await expectRefused(fetchUrl(`${site.origin}/hop?n=0&last=6`), 'more than 5 redirects');
    expect(site.hits.map((h) => h.url)).toEqual([0, 1, 2, 3, 4, 5].map((n) => `/hop?n=${n}&last=6`));
  });

  it('[sec-23] follows a chain of exactly 5 redirects', async () => {
    const result = await fetchUrl(`${site.origin}/hop?n=0&last=5`);
    expect(result).toMatchObject({ status: 200, body: 'arrived after 5 redirects' });
    expect(result.redirects).toHaveLength(5);
  });

  it.each(['file:///etc/passwd', 'gopher://127.0.0.1:70/_stats', 'data:text/plain,hello', 'ftp://example.com/x', 'javascript:alert(1)', 'ws://example.com/'])(
    '[sec-24] refuses %s by its scheme',
    async (url) => {
      await expectRefused(fetchUrl(url), /scheme is not allowed; only http: and https: are/);
    },
  );

  it('[sec-24] refuses a redirect to file:', async () => {
    await expectRefused(fetchUrl(`${site.origin}/redirect?to=${encodeURIComponent('file:///etc/passwd')}`), /file: scheme/);
  });

  it.each([
    'http://x@127.0.0.1/',
    'http://x@127.0.0.1:{port}/',
    'http://example.com@127.0.0.1:{port}/',
    'http://127.0.0.1#@example.com/',
    'http://127.0.0.1:{port}#@example.com/',
    'http://127.0.0.1:{port}\\@example.com/',
    'http://127.0.0.1:{port}?@example.com/',
  ])('[sec-25] refuses %s: the host is 127.0.0.1', async (template) => {
    const dns = neverAsked();
    await expectRefused(fetchUrl(template.replace('{port}', String(bystander.port)), {}, { lookup: dns }), '127.0.0.1 is a loopback address');
    expect(dns.calls).toEqual([]);
    expect(bystander.connections).toBe(0);
  });

  it('[sec-25] refuses credentials in the URL even for an allowed host, and does not echo them', async () => {
    const err = await expectRefused(fetchUrl(`http://agent:s3cret@127.0.0.1:${site.port}/hello`), /credentials/);
    expect(JSON.stringify({ message: err.message, details: err.details })).not.toContain('s3cret');
    expect(site.connections).toBe(0);
  });

  it('[sec-26] cuts a 1 GiB body at maxBytes quickly, closes the connection and holds little memory', async () => {
    const before = process.memoryUsage();
    const started = Date.now();
    const result = await fetchUrl(`${site.origin}/gib`, { maxBytes: MiB });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result).toMatchObject({ status: 200, bytes: MiB, truncated: true, timedOut: false, bodyEncoding: 'base64' });
    await until(() => stream.closed);
    expect(stream.closed).toBe(true);
    expect(stream.sent).toBeLessThan(64 * MiB);
    const grown = process.memoryUsage().arrayBuffers - before.arrayBuffers;
    expect(grown).toBeLessThan(64 * MiB);
  });

  it('[sec-26] cuts an endless chunked response at maxBytes', async () => {
    const result = await fetchUrl(`${site.origin}/endless`, { maxBytes: 256 * 1024 });
    expect(result).toMatchObject({ bytes: 256 * 1024, truncated: true, timedOut: false });
    expect(result.headers['transfer-encoding']).toBe('chunked');
    expect(result.body).toBe('b'.repeat(256 * 1024));
    await until(() => stream.closed);
    expect(stream.closed).toBe(true);
  });

  it('[sec-26] cuts a slow drip at the deadline and returns what came, marked truncated and timedOut', async () => {
    const started = Date.now();
    const result = await fetchUrl(`${site.origin}/drip`, { timeoutMs: 600 });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(550);
    expect(elapsed).toBeLessThan(2000);
    expect(result).toMatchObject({ status: 200, truncated: true, timedOut: true });
    expect(result.bytes).toBeGreaterThan(0);
    expect(result.body).toMatch(/^(drip\n)+$/);
    await until(() => stream.closed);
    expect(stream.closed).toBe(true);
  });
});
