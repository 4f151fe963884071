import { earlyRefusal, type EarlyRefusalSources } from './early-refusals.js';

// Which requests take a turn in the share of requests without a known key (turn(null, bytes)), decided from
// the method, the path and the headers alone.
describe('earlyRefusal: the turns of requests that need no key', () => {
  const turnsOf = async (method: string, url: string, headers: Record<string, string> = {}) => {
    const turns: Array<{ tenantId: string | null; bytes: number | undefined }> = [];
    const sources: EarlyRefusalSources = {
      isAdminToken: () => false,
      unseenKey: () => false,
      check: () => Promise.resolve(null),
      turn: (tenantId, bytes) => {
        turns.push({ tenantId, bytes });
        return Promise.resolve();
      },
      requestsRefused: () => null,
      addressRefused: () => null,
      someAddressRefused: () => false,
      knownToken: () => false,
      failed: () => undefined,
    };
    const refusal = await earlyRefusal(method, url, headers, '127.0.0.1', {}, sources);
    return { refusal, turns };
  };

  it.each([
    ['POST', '/oauth/register', 20_480],
    ['POST', '/oauth/token', 300],
    ['GET', '/oauth/authorize?client_id=x', 0],
    ['GET', '/.well-known/oauth-authorization-server', 0],
    ['GET', '/v1/connections/callback?state=x', 0],
    ['GET', '/v1/connections/client-metadata.json', 0],
    ['GET', '/no/such/path', 0],
    ['GET', '/', 0],
  ])('%s %s takes one turn in that share, charged its declared body, and goes on', async (method, url, bytes) => {
    const { refusal, turns } = await turnsOf(method, url, bytes > 0 ? { 'content-length': String(bytes) } : {});
    expect(refusal).toBeNull();
    expect(turns).toEqual([{ tenantId: null, bytes }]);
  });

  it.each(['/docs', '/docs/swagger-ui-init.js', '/openapi.json', '/console/'])('GET %s is charged as a public document', async (url) => {
    const { turns } = await turnsOf('GET', url);
    expect(turns).toEqual([{ tenantId: null, bytes: 256 * 1024 }]);
  });

  it.each(['/health/live', '/health/ready', '/metrics'])('GET %s, an operator probe, takes no turn', async (url) => {
    expect(await turnsOf('GET', url)).toEqual({ refusal: null, turns: [] });
  });

  it('answers a /v1 request without a key 401 after a turn in that share', async () => {
    const { refusal, turns } = await turnsOf('GET', '/v1/projects');
    expect(refusal?.error.code).toBe('unauthorized');
    expect(turns).toEqual([{ tenantId: null, bytes: undefined }]);
  });
});
