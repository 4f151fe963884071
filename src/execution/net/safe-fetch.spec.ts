import { networkInterfaces } from 'node:os';
import {
  expectToolError,
  fakeDns,
  failure,
  type Hit,
  listen,
  type LocalServer,
  routes,
  safeFetchSites,
  stream,
  TLS_CERT,
  until,
} from '../../../test/support/safe-fetch-sites.js';
import type { Resolver, SafeFetchRequest } from './safe-fetch.js';

const sites = safeFetchSites();
const { fetchUrl } = sites;
let site: LocalServer;
let tlsSite: LocalServer;
beforeAll(() => {
  ({ site, tlsSite } = sites);
});

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
    const result = await fetchUrl(
      `https://tls.test:${tlsSite.port}/`,
      {},
      {
        allowHosts: [`tls.test:${tlsSite.port}`],
        lookup: dns,
        ca: TLS_CERT,
      },
    );
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
    const err = await expectToolError(fetchUrl('http://nowhere.example.test/', {}, { lookup: fakeDns({}) }), 'network_error', true);
    expect(err.message).toMatch(/could not be resolved/);
  });

  it('reports a name with no addresses as a network_error', async () => {
    await expectToolError(
      fetchUrl('http://empty.example.test/', {}, { lookup: fakeDns({ 'empty.example.test': [] }) }),
      'network_error',
      true,
    );
  });

  it('reports an untrusted certificate as a network_error', async () => {
    const err = await expectToolError(
      fetchUrl(
        `https://tls.test:${tlsSite.port}/`,
        {},
        {
          allowHosts: [`tls.test:${tlsSite.port}`],
          lookup: fakeDns({ 'tls.test': ['127.0.0.1'] }),
        },
      ),
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
