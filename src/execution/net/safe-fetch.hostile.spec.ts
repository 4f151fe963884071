import dc from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import {
  expectRefused,
  expectToolError,
  fakeDns,
  type LocalServer,
  MiB,
  safeFetchSites,
  stream,
  TLS_CERT,
  until,
} from '../../../test/support/safe-fetch-sites.js';

const sites = safeFetchSites();
const { fetchUrl } = sites;
let site: LocalServer;
let bystander: LocalServer;
let tlsSite: LocalServer;
beforeAll(() => {
  ({ site, bystander, tlsSite } = sites);
});

describe('fetch_url hostile inputs (docs/security-model.md, cases 18-26)', () => {
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
    const err = await expectRefused(
      fetchUrl('http://[fd00:ec2::254]/latest/meta-data/'),
      /fd00:ec2::254 is a unique-local\/cloud metadata/,
    );
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
    await expectRefused(fetchUrl('http://meta.example.test/', {}, { lookup: dns, allowHosts: ['meta.example.test'] }), /cloud metadata/);
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
      fetchUrl(
        `https://tls.test:${tlsSite.port}/down`,
        {},
        {
          allowHosts: [`tls.test:${tlsSite.port}`, `127.0.0.1:${site.port}`],
          lookup: fakeDns({ 'tls.test': ['127.0.0.1'] }),
          ca: TLS_CERT,
        },
      ),
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

  it.each([
    'file:///etc/passwd',
    'gopher://127.0.0.1:70/_stats',
    'data:text/plain,hello',
    'ftp://example.com/x',
    'javascript:alert(1)',
    'ws://example.com/',
  ])('[sec-24] refuses %s by its scheme', async (url) => {
    await expectRefused(fetchUrl(url), /scheme is not allowed; only http: and https: are/);
  });

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
    await expectRefused(
      fetchUrl(template.replace('{port}', String(bystander.port)), {}, { lookup: dns }),
      '127.0.0.1 is a loopback address',
    );
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
