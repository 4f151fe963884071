import { jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { isIP, type AddressInfo } from 'node:net';
import tls from 'node:tls';
import type { TestApp, TestTenant } from '../support/test-app.js';
import { AuditTrail, expectRefusal, invoke } from './security-helpers.js';

// docs/security-model.md, "fetch_url and outbound requests" (cases 18-26), through HTTP against real local servers: a "public" server the
// operator allowed (FETCH_ALLOW_HOSTS=127.0.0.1:<port>) and a "victim" on every loopback address that no call
// may ever reach. Name resolution is the one thing scripted: names under .sec-test.example get the answers
// below (the rest go to the system resolver), which is how a hostile DNS is played without touching the machine's.

const realDns = await import('node:dns/promises');
const PUBLIC_V6 = '2606:4700:4700::1111';
const SCRIPTED: Record<string, (question: number) => string[]> = {
  'loopback.sec-test.example': () => ['127.0.0.1'],
  'ten.sec-test.example': () => ['10.1.2.3'],
  'lan.sec-test.example': () => ['192.168.1.20'],
  'mapped.sec-test.example': () => ['::ffff:127.0.0.1'],
  'metadata.sec-test.example': () => ['169.254.169.254'],
  'mixed.sec-test.example': () => [PUBLIC_V6, '127.0.0.1'],
  // DNS rebinding: public on the first question, loopback on every later one.
  'rebind.sec-test.example': (question) => (question === 1 ? [PUBLIC_V6] : ['127.0.0.1']),
};
const dnsQuestions: string[] = [];
const scriptedLookup = async (hostname: string, options?: { all?: boolean }) => {
  dnsQuestions.push(hostname);
  const script = SCRIPTED[hostname.toLowerCase()];
  if (!script) return realDns.lookup(hostname, options as never);
  const answers = script(dnsQuestions.filter((h) => h === hostname).length).map((address) => ({ address, family: isIP(address) }));
  return options?.all ? answers : answers[0];
};
jest.unstable_mockModule('node:dns/promises', () => ({
  ...realDns,
  default: { ...realDns.default, lookup: scriptedLookup },
  lookup: scriptedLookup,
}));
const { createTestApp } = await import('../support/test-app.js');

const TLS_KEY = readFileSync(new URL('../../src/execution/net/fixtures/tls-test.key.pem', import.meta.url));
const TLS_CERT = readFileSync(new URL('../../src/execution/net/fixtures/tls-test.cert.pem', import.meta.url));
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

interface Recorder {
  port: number;
  hits: string[];
  connections: number;
  server: http.Server;
}

async function serve(handler: http.RequestListener, host: string, tls = false): Promise<Recorder> {
  const recorder: Recorder = { port: 0, hits: [], connections: 0, server: undefined as unknown as http.Server };
  const onRequest: http.RequestListener = (req, res) => {
    recorder.hits.push(req.url ?? '');
    handler(req, res);
  };
  const server = tls ? https.createServer({ key: TLS_KEY, cert: TLS_CERT }, onRequest) : http.createServer(onRequest);
  server.on('connection', () => recorder.connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  recorder.port = (server.address() as AddressInfo).port;
  recorder.server = server;
  return recorder;
}

const close = (r: Recorder) =>
  new Promise<void>((resolve) => {
    r.server.closeAllConnections();
    r.server.close(() => resolve());
  });

// Streams `total` bytes (or forever) with back-pressure, stopping as soon as the client goes away.
function stream(res: http.ServerResponse, total: number, chunk: Buffer, sent: { bytes: number; closed: boolean }) {
  res.on('close', () => (sent.closed = true));
  const pump = () => {
    while (!sent.closed && sent.bytes < total) {
      sent.bytes += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    if (!sent.closed) res.end();
  };
  pump();
}

describe('fetch_url over HTTP', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let audit: AuditTrail;
  let victim: Recorder;
  let site: Recorder;
  let tlsSite: Recorder;
  const huge = { bytes: 0, closed: false };
  const endless = { bytes: 0, closed: false };
  const drip = { bytes: 0, closed: false };
  let V: number;
  let P: number;

  const fetchUrl = (args: Record<string, unknown>) => invoke(t, tenant, projectId, 'fetch_url', args);

  async function refuse(url: string, status: number, code: string, extra: Record<string, unknown> = {}) {
    const res = await fetchUrl({ url, ...extra });
    const { message } = expectRefusal(res, status, code);
    await audit.expectRows(code === 'invalid_arguments' ? 'invalid_arguments' : 'denied', [{ tool: 'fetch_url', errorCode: code }]);
    return { res, message };
  }

  async function fetched(args: Record<string, unknown>) {
    const res = await fetchUrl(args);
    expect({ status: res.status, tool: res.body.tool }).toEqual({ status: 200, tool: 'fetch_url' });
    return res.body as { status: string; result?: Record<string, unknown>; error?: { code: string; message: string } };
  }

  // Nothing reached the victim (not even a TCP connection), and the service still fetches.
  async function settle() {
    expect({ connections: victim.connections, hits: victim.hits }).toEqual({ connections: 0, hits: [] });
    const ok = await fetched({ url: `http://127.0.0.1:${P}/ok` });
    expect(ok).toMatchObject({ status: 'ok', result: { status: 200, body: 'public ok' } });
    await t.http.get('/health/ready').expect(200);
  }

  beforeAll(async () => {
    // Listening on :: takes 127.0.0.1, ::1 and ::ffff:127.0.0.1 on one port.
    victim = await serve((_req, res) => res.end('victim secret'), '::');
    V = victim.port;
    site = await serve((req, res) => {
      const url = new URL(req.url ?? '/', 'http://site');
      const chain = /^\/chain\/(\d+)$/.exec(url.pathname);
      if (url.pathname === '/ok') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('public ok');
      if (url.pathname === '/landing') return void res.end('landed');
      if (url.pathname === '/redirect') return void res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
      if (chain) {
        const left = Number(chain[1]);
        return void (left > 0 ? res.writeHead(302, { location: `/chain/${left - 1}` }).end() : res.end('end of chain'));
      }
      if (url.pathname === '/huge') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(GiB) });
        return stream(res, GiB, Buffer.alloc(64 * 1024), huge);
      }
      if (url.pathname === '/endless') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return stream(res, Number.POSITIVE_INFINITY, Buffer.alloc(16 * 1024, 'y'), endless);
      }
      if (url.pathname === '/drip') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.on('close', () => (drip.closed = true));
        const timer = setInterval(() => {
          drip.bytes++;
          res.write('.');
        }, 50);
        res.on('close', () => clearInterval(timer));
        return;
      }
      res.writeHead(404).end();
    }, '127.0.0.1');
    P = site.port;
    tlsSite = await serve(
      (req, res) => {
        if (req.url === '/downgrade') return void res.writeHead(302, { location: `http://127.0.0.1:${P}/landing` }).end();
        res.end('tls ok');
      },
      '127.0.0.1',
      true,
    );

    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${P},127.0.0.1:${tlsSite.port}` } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    audit = new AuditTrail(t, tenant, projectId);
  });

  beforeEach(() => audit.skip());

  afterAll(async () => {
    await t.close();
    await Promise.all([victim, site, tlsSite].map(close));
  });

  it.each([
    'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
    'http://169.254.169.254:80/',
    'http://[fd00:ec2::254]/latest/meta-data/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://metadata.google.internal./computeMetadata/v1/',
    'http://metadata.sec-test.example/latest/meta-data/',
  ])('[sec-18] refuses the cloud metadata service at %s', async (url) => {
    const { message } = await refuse(url, 403, 'url_blocked');
    expect(message).toMatch(/metadata|link-local|internal/);
    // metadata.google.internal is refused by its name: the resolver is never asked.
    expect(dnsQuestions.filter((h) => h.startsWith('metadata.google'))).toEqual([]);
    await settle();
  });

  it.each(['2130706433', '0x7f.1', '017700000001', '127.1', '0x7f000001', '127.000.000.001', '127.0.0.1', '0.0.0.0', '0'])(
    '[sec-19] refuses http://%s:<victim>/, another spelling of a local address',
    async (host) => {
      const { message } = await refuse(`http://${host}:${V}/`, 403, 'url_blocked');
      expect(message).toMatch(/loopback|unspecified/);
      await settle();
    },
  );

  it.each([
    ['[::ffff:7f00:1]', 'IPv4-mapped loopback'],
    ['[::ffff:127.0.0.1]', 'IPv4-mapped loopback, dotted'],
    ['[::1]', 'IPv6 loopback'],
    ['[::]', 'IPv6 unspecified'],
    ['[::127.0.0.1]', 'IPv4-compatible loopback'],
    ['[64:ff9b::a9fe:a9fe]', 'NAT64 of the metadata address'],
    ['[64:ff9b::7f00:1]', 'NAT64 of loopback'],
    ['[2002:7f00:1::]', '6to4 of loopback'],
    ['[2002:a9fe:a9fe::1]', '6to4 of the metadata address'],
    ['[2001:0:4136:e378:8000:63bf:80ff:fffe]', 'Teredo'],
    ['[fe80::1]', 'IPv6 link-local'],
    ['[fd00::1]', 'IPv6 unique-local'],
  ])('[sec-20] refuses http://%s:<victim>/ (%s)', async (host) => {
    await refuse(`http://${host}:${V}/`, 403, 'url_blocked');
    await settle();
  });

  it('[sec-21] refuses localhost by its name, before asking DNS', async () => {
    const before = dnsQuestions.length;
    for (const host of ['localhost', 'LOCALHOST.', 'api.localhost', 'vm']) {
      const { message } = await refuse(`http://${host}:${V}/`, 403, 'url_blocked');
      expect(message).toMatch(/loopback|single-label/);
    }
    expect(dnsQuestions.length).toBe(before);
    await settle();
  });

  it.each([
    ['loopback.sec-test.example', '127.0.0.1'],
    ['ten.sec-test.example', '10.1.2.3'],
    ['lan.sec-test.example', '192.168.1.20'],
    ['mapped.sec-test.example', '::ffff:127.0.0.1'],
  ])('[sec-21] refuses %s, a name that resolves to %s, once resolved and before any byte is sent', async (name, address) => {
    const { message } = await refuse(`http://${name}:${V}/`, 403, 'url_blocked');
    expect(message).toContain(`resolves to ${address}`);
    expect(dnsQuestions).toContain(name);
    await settle();
  });

  it('[sec-22] refuses a DNS answer that holds a public address and a private one', async () => {
    const { message } = await refuse(`http://mixed.sec-test.example:${V}/`, 403, 'url_blocked');
    expect(message).toContain('resolves to 127.0.0.1');
    await settle();
  });

  it('[sec-22] connects to the very address it checked: a rebinding name never reaches the private address', async () => {
    // First question: a public address (unreachable from here, so the fetch fails on the network). A client
    // that resolved a second time to connect would get 127.0.0.1 and reach the victim.
    const first = await fetched({ url: `http://rebind.sec-test.example:${V}/`, timeoutMs: 3000 });
    expect(first.status).not.toBe('ok');
    expect(first.error?.code).toMatch(/^(network_error|timeout)$/);
    expect(dnsQuestions.filter((h) => h === 'rebind.sec-test.example')).toHaveLength(1);
    // The next call is answered 127.0.0.1 and refused.
    const { message } = await refuse(`http://rebind.sec-test.example:${V}/`, 403, 'url_blocked');
    expect(message).toContain('resolves to 127.0.0.1');
    await settle();
  });

  it.each([
    () => `http://127.0.0.1:${V}/`,
    () => `http://localhost:${V}/`,
    () => `http://[::1]:${V}/`,
    () => `http://2130706433:${V}/`,
    () => `http://loopback.sec-test.example:${V}/`,
    () => 'http://169.254.169.254/latest/meta-data/',
  ])('[sec-23] refuses a redirect from the allowed site to a local address (%#)', async (target) => {
    const from = `/redirect?to=${encodeURIComponent(target())}`;
    const { res } = await refuse(`http://127.0.0.1:${P}${from}`, 403, 'url_blocked');
    expect(res.body.error.message).toContain('Refused to fetch');
    expect(site.hits.at(-1)).toBe(from);
    await settle();
  });

  it('[sec-23] refuses an https -> http downgrade, even to an allowed host', async () => {
    // The test server's certificate is self-signed: for the length of this call, and for its port only, the
    // TLS layer accepts it (the https module looks tls.connect up on every connection).
    const realConnect = tls.connect;
    const tlsPort = tlsSite.port;
    tls.connect = (...args: unknown[]) => {
      const options = args[0] as tls.ConnectionOptions | undefined;
      if (typeof options === 'object' && options !== null && Number(options.port) === tlsPort) options.rejectUnauthorized = false;
      return (realConnect as (...a: unknown[]) => tls.TLSSocket)(...args);
    };
    try {
      const landings = site.hits.filter((h) => h === '/landing').length;
      const { message } = await refuse(`https://127.0.0.1:${tlsSite.port}/downgrade`, 403, 'url_blocked');
      expect(message).toMatch(/downgrades https to http/);
      expect(tlsSite.hits).toEqual(['/downgrade']);
      expect(site.hits.filter((h) => h === '/landing').length).toBe(landings);
    } finally {
      tls.connect = realConnect;
    }
    await settle();
  });

  it('[sec-23] refuses a chain of more than 5 redirects and never requests the URL past the limit', async () => {
    site.hits.length = 0;
    const { message } = await refuse(`http://127.0.0.1:${P}/chain/6`, 403, 'url_blocked');
    expect(message).toMatch(/more than 5 redirects/);
    expect(site.hits).toEqual(['/chain/6', '/chain/5', '/chain/4', '/chain/3', '/chain/2', '/chain/1']);
    const five = await fetched({ url: `http://127.0.0.1:${P}/chain/5` });
    expect(five).toMatchObject({ status: 'ok', result: { body: 'end of chain' } });
    expect(five.result!.redirects).toHaveLength(5);
    await settle();
  });

  it.each([
    'file:///etc/passwd',
    'FILE:///etc/passwd',
    'gopher://127.0.0.1:70/_GET%20/',
    'data:text/plain;base64,aGVsbG8=',
    'ftp://127.0.0.1:21/x',
    'javascript:alert(1)',
    '//127.0.0.1/',
  ])('[sec-24] refuses %s by the schema, naming /url', async (url) => {
    const { res } = await refuse(url, 422, 'invalid_arguments');
    const issues = res.body.error.issues as Array<{ path: string }>;
    expect(issues.length).toBeGreaterThan(0);
    expect(issues.map((i) => i.path)).toEqual(issues.map(() => '/url'));
    expect(res.body.error.message).toContain('/url');
    await settle();
  });

  it.each(['file:///etc/passwd', 'gopher://127.0.0.1:70/_x', 'ftp://127.0.0.1:21/x'])(
    '[sec-24] refuses a redirect from the allowed site to %s',
    async (target) => {
      const { message } = await refuse(`http://127.0.0.1:${P}/redirect?to=${encodeURIComponent(target)}`, 403, 'url_blocked');
      expect(message).toMatch(/scheme is not allowed/);
      await settle();
    },
  );

  it('[sec-25] refuses credentials in the URL even for the allowed host, and never echoes them', async () => {
    const okHits = site.hits.filter((h) => h === '/ok').length;
    for (const url of [`http://x@127.0.0.1:${P}/ok`, `http://user:hunter2@127.0.0.1:${P}/ok`]) {
      const { res, message } = await refuse(url, 403, 'url_blocked');
      expect(message).toMatch(/credentials/);
      expect(JSON.stringify(res.body)).not.toContain('hunter2');
    }
    expect(site.hits.filter((h) => h === '/ok').length).toBe(okHits);
    await settle();
  });

  it.each([
    () => `http://x@127.0.0.1:${V}/`,
    () => `http://127.0.0.1:${V}#@example.com/`,
    () => `http://example.com@127.0.0.1:${V}/`,
    () => `http://127.0.0.1:${V}?@example.com/`,
    () => `http://example.com:80@127.0.0.1:${V}/`,
  ])('[sec-25] refuses a URL whose real host is 127.0.0.1 (%#)', async (url) => {
    await refuse(url(), 403, 'url_blocked');
    await settle();
  });

  it('[sec-26] cuts a 1 GiB body at maxBytes, closes the connection and keeps memory flat', async () => {
    const rssBefore = process.memoryUsage().rss;
    const started = Date.now();
    const res = await fetched({ url: `http://127.0.0.1:${P}/huge`, maxBytes: 65536 });
    expect(res).toMatchObject({ status: 'ok', result: { status: 200, bytes: 65536, truncated: true, timedOut: false } });
    expect(Buffer.from(res.result!.body as string, 'base64')).toHaveLength(65536);
    expect(Date.now() - started).toBeLessThan(10_000);
    await waitFor(() => huge.closed);
    expect(huge.bytes).toBeLessThan(64 * MiB);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * MiB);
    await settle();
  });

  it('[sec-26] cuts an endless chunked response at maxBytes (and at the default cap)', async () => {
    const capped = await fetched({ url: `http://127.0.0.1:${P}/endless`, maxBytes: 100_000 });
    expect(capped).toMatchObject({ status: 'ok', result: { bytes: 100_000, truncated: true, timedOut: false } });
    await waitFor(() => endless.closed);
    endless.closed = false;
    const byDefault = await fetched({ url: `http://127.0.0.1:${P}/endless` });
    expect(byDefault).toMatchObject({ status: 'ok', result: { bytes: 100 * 1024, truncated: true } });
    await waitFor(() => endless.closed);
    expect(endless.bytes).toBeLessThan(64 * MiB);
    await settle();
  });

  it('[sec-26] cuts a slow drip at the deadline and returns what came, marked truncated and timed out', async () => {
    const started = Date.now();
    const res = await fetched({ url: `http://127.0.0.1:${P}/drip`, timeoutMs: 1000 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(res).toMatchObject({ status: 'ok', result: { status: 200, truncated: true, timedOut: true } });
    expect((res.result!.body as string).length).toBeGreaterThan(0);
    await waitFor(() => drip.closed);
    await settle();
  });

  it('[sec-26] refuses a maxBytes above FETCH_MAX_BYTES_LIMIT by the schema', async () => {
    const { res } = await refuse(`http://127.0.0.1:${P}/huge`, 422, 'invalid_arguments', { maxBytes: 1024 * MiB });
    expect(res.body.error.issues).toEqual([expect.objectContaining({ path: '/maxBytes' })]);
    await settle();
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
