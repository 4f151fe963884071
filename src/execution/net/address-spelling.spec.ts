import fc from 'fast-check';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError } from '../../common/errors/app-error.js';
import { AddressPolicy } from './address-policy.js';
import { safeFetch } from './safe-fetch.js';

const denyAll = new AddressPolicy([]);
const hostOf = (spelling: string) => new URL(`http://${spelling}/`).hostname;

// Every forbidden IPv4 range, as [first address, prefix length].
const FORBIDDEN_V4: ReadonlyArray<readonly [number, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
].map(([base, bits]) => [dottedToInt(base as string), bits as number] as const);

function dottedToInt(dotted: string): number {
  return dotted.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

const octets = (n: number) => [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const inRadix = (value: number, radix: 'dec' | 'hex' | 'oct') =>
  radix === 'dec' ? String(value) : radix === 'hex' ? `0x${value.toString(16)}` : `0${value.toString(8)}`;

// Every way the WHATWG IPv4 parser reads a number: 1 to 4 parts, each decimal, hex or octal.
const forbiddenIpv4Spelling = fc
  .tuple(
    fc.constantFrom(...FORBIDDEN_V4),
    fc.nat(),
    fc.integer({ min: 1, max: 4 }),
    fc.array(fc.constantFrom('dec' as const, 'hex' as const, 'oct' as const), { minLength: 4, maxLength: 4 }),
  )
  .map(([[base, bits], offset, parts, radixes]) => {
    const n = (base + (offset % 2 ** (32 - bits))) >>> 0;
    const [a, b, c, d] = octets(n);
    const values = parts === 1 ? [n] : parts === 2 ? [a, n & 0xffffff] : parts === 3 ? [a, b, n & 0xffff] : [a, b, c, d];
    return { n, spelling: values.map((v, i) => inRadix(v, radixes[i])).join('.') };
  });

describe('forbidden IPv4 ranges, property', () => {
  it('refuses every spelling of a forbidden IPv4 address once a URL has parsed it', () => {
    fc.assert(
      fc.property(forbiddenIpv4Spelling, ({ n, spelling }) => {
        const hostname = hostOf(spelling);
        expect(hostname).toBe(octets(n).join('.'));
        const verdict = denyAll.checkHost(hostname, 80);
        expect(verdict.allowed).toBe(false);
        expect(verdict.reason).toContain(hostname);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses the same addresses in their IPv4-mapped, NAT64 and 6to4 forms', () => {
    fc.assert(
      fc.property(forbiddenIpv4Spelling, ({ n }) => {
        const hex = [n >>> 16, n & 0xffff].map((p) => p.toString(16));
        for (const form of [`[::ffff:${hex.join(':')}]`, `[64:ff9b::${hex.join(':')}]`, `[2002:${hex.join(':')}::1]`]) {
          expect(denyAll.checkHost(hostOf(form), 80).allowed).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('forbidden IPv4 spellings through safeFetch, property', () => {
  let connections = 0;
  const bystander = http.createServer((_req, res) => res.end('reached'));
  bystander.on('connection', () => connections++);

  beforeAll(() => new Promise<void>((resolve) => bystander.listen(0, '127.0.0.1', resolve)));
  afterAll(() => new Promise<void>((resolve) => bystander.close(() => resolve())));

  it('[sec-19] refuses http://<any spelling of a forbidden IPv4>/ before any DNS or connection', async () => {
    const port = (bystander.address() as AddressInfo).port;
    let lookups = 0;
    await fc.assert(
      fc.asyncProperty(forbiddenIpv4Spelling, async ({ spelling }) => {
        const outcome = await safeFetch(
          { url: `http://${spelling}:${port}/`, method: 'GET', timeoutMs: 2000, maxBytes: 1024 },
          { allowHosts: [], maxRedirects: 5, lookup: async () => (lookups++, [{ address: '8.8.8.8', family: 4 }]) },
        ).catch((err: unknown) => err);
        expect(outcome).toBeInstanceOf(AppError);
        expect(outcome).toMatchObject({ status: 403, code: 'url_blocked' });
      }),
      { numRuns: 300 },
    );
    expect(lookups).toBe(0);
    expect(connections).toBe(0);
  });
});
