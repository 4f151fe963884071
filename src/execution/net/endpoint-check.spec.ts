import { checkEndpoint } from './endpoint-check.js';
import type { Resolver } from './safe-fetch.js';

const dns =
  (answers: Record<string, string[]>): Resolver =>
  async (hostname) => {
    const found = answers[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => 'allowed',
    (error: { code?: string; message: string }) => `${error.code}: ${error.message}`,
  );

describe('checkEndpoint (a skill endpoint judged at registration)', () => {
  const lookup = dns({ 'api.example.com': ['93.184.215.14'], 'inside.example.com': ['10.1.2.3'], 'meta.example.com': ['169.254.169.254'] });

  it('refuses loopback, metadata and private addresses, written or resolved, as a call would', async () => {
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://[::1]/',
      'http://169.254.169.254/latest/',
      'http://2130706433/',
      'http://localhost/',
    ]) {
      expect(await refusal(checkEndpoint(url, { allowHosts: [], lookup }))).toMatch(/^url_blocked: /);
    }
    expect(await refusal(checkEndpoint('https://inside.example.com/hook', { allowHosts: [], lookup }))).toMatch(
      /resolves to 10\.1\.2\.3, a private address/,
    );
    expect(await refusal(checkEndpoint('https://meta.example.com/', { allowHosts: [], lookup }))).toMatch(/169\.254\.169\.254/);
  });

  it('allows a public address, what FETCH_ALLOW_HOSTS opens, and a name that does not resolve yet', async () => {
    await expect(checkEndpoint('https://api.example.com/hook', { allowHosts: [], lookup })).resolves.toBe('allowed');
    await expect(checkEndpoint('http://127.0.0.1:8080/hook', { allowHosts: ['127.0.0.1:8080'], lookup })).resolves.toBe('allowed');
    await expect(checkEndpoint('https://inside.example.com/hook', { allowHosts: ['inside.example.com'], lookup })).resolves.toBe('allowed');
    // An opened name still never reaches the metadata service.
    expect(await refusal(checkEndpoint('https://meta.example.com/', { allowHosts: ['meta.example.com'], lookup }))).toMatch(/metadata/);
    await expect(checkEndpoint('https://not-yet.example.com/hook', { allowHosts: [], lookup })).resolves.toBe('unresolved');
    const silent: Resolver = () => new Promise(() => undefined);
    await expect(checkEndpoint('https://slow.example.com/', { allowHosts: [], lookup: silent, resolveTimeoutMs: 50 })).resolves.toBe(
      'unresolved',
    );
  });
});
