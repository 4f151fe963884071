import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';
import { jest } from '@jest/globals';
import { ApiKeysService } from '../../src/tenants/api-keys.service.js';
import { median, timeEach } from '../support/latency.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// docs/security-model.md, case 127: a flood of small requests with made-up keys, no key of its own needed.
// Each was a 401 through Nest's pipeline with an access-log line, and a key of a new prefix a database query
// too: 16 clients looping them from one address took another tenant to 7% of its calls, its p99 to 11x.
// Past RATE_LIMIT_AUTH_FAILURES 401s in a window, an address's requests without a key known here are now
// answered 429 from their headers, a second later. The loopback network is all of 127/8: each address
// stands for a client.

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const FAILURES = 20;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: { error?: { code?: string; message?: string } } & Record<string, unknown>;
  ms: number;
}

const madeUpKey = () => `tg_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('hex')}`;

describe('[sec-127] a flood of made-up keys from one address', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let project: string;

  // A request on a connection of its own from `from`, with `token` as its bearer token (none: no header).
  // `agent`: connections kept open, bound to the agent's own address (`from` is then unused).
  const send = (from: string, path: string, token?: string, agent?: http.Agent): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const req = http.get(
        {
          host: '127.0.0.1',
          port: t.port,
          path,
          ...(agent ? { agent } : { localAddress: from, agent: false }),
          headers: token ? { authorization: `Bearer ${token}` } : {},
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: text ? JSON.parse(text) : {},
              ms: performance.now() - started,
            });
          });
        },
      );
      req.on('error', reject);
      req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s')));
    });
  const tools = () => `/v1/projects/${project}/tools`;
  const refusals = async () => {
    const m = parsePrometheusText((await t.http.get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200)).text);
    return sampleValue(m, 'toolgate_rate_limit_refusals_total', { bucket: 'failed-authentication' }) ?? 0;
  };
  const failOnce = async (from: string) => expect((await send(from, tools(), madeUpKey())).status).toBe(401);

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_AUTH_FAILURES: String(FAILURES), METRICS_TOKEN } });
    tenant = await t.createTenant();
    project = (await t.createProject(tenant)).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('[sec-127] answers an address past RATE_LIMIT_AUTH_FAILURES 429 a second later, whatever key it makes up; another address is answered 401', async () => {
    const from = '127.0.0.2';
    for (let i = 0; i < FAILURES; i++) await failOnce(from);
    const before = await refusals();
    const logged = t.logs.length;

    const refused = await send(from, tools(), madeUpKey());
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'rate_limited' });
    expect(refused.body.error?.message).toContain('this address');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.ms).toBeGreaterThanOrEqual(900);
    // No key, the admin's routes, an MCP endpoint: the same.
    expect((await send(from, tools())).status).toBe(429);
    expect((await send(from, '/v1/admin/tenants', madeUpKey())).status).toBe(429);
    expect((await send(from, `/v1/projects/${project}/mcp`, madeUpKey())).status).toBe(429);
    expect(await refusals()).toBe(before + 4);
    // Counted, not logged one by one: no access line for the refused requests.
    const accessLines = (status: number, from = logged) =>
      t.logs.slice(from).filter((line) => line.msg === 'request' && line.status === status);
    expect(accessLines(429)).toEqual([]);
    // The failures before were logged as any request is: the lines looked for above are the access log's.
    expect(accessLines(401, 0).length).toBeGreaterThanOrEqual(FAILURES);

    // Another address is not refused for this one's failures.
    expect((await send('127.0.0.3', tools(), madeUpKey())).status).toBe(401);
  });

  it("[sec-127] lets a tenant's key that passed lately, and the admin token, through from the refused address", async () => {
    const from = '127.0.0.4';
    expect((await send(from, tools(), tenant.key)).status).toBe(200);
    const fresh = (
      await t.http
        .post('/v1/api-keys')
        .set(tenant.auth)
        .send({ name: 'new-agent', role: 'agent', projectIds: [project] })
        .expect(201)
    ).body as {
      key: string;
    };
    for (let i = 0; i < FAILURES; i++) await failOnce(from);

    expect((await send(from, tools(), tenant.key)).status).toBe(200);
    expect((await send(from, '/v1/admin/tenants', t.admin.Authorization.slice('Bearer '.length))).status).toBe(200);
    // A key not seen here yet waits for the window from this address; from another it passes, and then here too.
    const unseen = await send(from, tools(), fresh.key);
    expect(unseen.status).toBe(429);
    expect((await send('127.0.0.5', tools(), fresh.key)).status).toBe(200);
    expect((await send(from, tools(), fresh.key)).status).toBe(200);
    // Public routes are not refused.
    expect((await send(from, '/health/live')).status).toBe(200);
  });

  // Another tenant's list_files, 40 in a row alone and 40 beside `clients` loops of `flood` (each loop's
  // number given), after 1.5 s of it and once `underWay` says the flood is what the test means (at most 20 s
  // more): the ratio of the two medians, and how many requests the flood made.
  const besideFlood = async (
    label: string,
    clients: number,
    flood: (client: number) => Promise<unknown>,
    underWay: () => boolean = () => true,
  ) => {
    const timed = (count: number) =>
      timeEach(count, () =>
        t.http
          .post(`/v1/projects/${project}/tools/list_files/invoke`)
          .set('Authorization', `Bearer ${tenant.key}`)
          .send({ arguments: { path: '.' } })
          .expect(200),
      );
    const alone = await timed(40);
    let flooding = true;
    let made = 0;
    const loops = Array.from({ length: clients }, async (_, client) => {
      while (flooding) {
        await flood(client).catch(() => undefined);
        made++;
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    for (const waitUntil = Date.now() + 20_000; !underWay() && Date.now() < waitUntil;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const beside = await timed(40);
    flooding = false;
    await Promise.all(loops);
    // A floor of 20 ms: a ratio of two medians of a few milliseconds says nothing, and other suites share the
    // machine (without the share of requests without a known key, the floods here took the median to 90-185 ms).
    const ratio = median(beside) / Math.max(median(alone), 20);
    process.stderr.write(
      `[sec-127] ${label}: list_files median alone ${median(alone).toFixed(1)} ms, beside ${made} requests ${median(beside).toFixed(1)} ms: ${ratio.toFixed(2)}x\n`,
    );
    return { ratio, made };
  };

  it("[sec-127] keeps another tenant's calls about as fast beside 32 clients looping made-up keys", async () => {
    const { ratio, made } = await besideFlood('made-up keys from one address', 32, () => send('127.0.0.6', tools(), madeUpKey()));
    expect(made).toBeGreaterThan(FAILURES);
    expect(ratio).toBeLessThan(3);
  }, 60_000);

  it("[sec-127] and beside clients that change address before their address's limit, with made-up keys and with none", async () => {
    // Each client keeps its connection open, and moves to a new address after a quarter of FAILURES requests:
    // the limit per address never applies. Requests without a known key take their turns in one share, so
    // how fast the flood goes depends on the machine; the measure waits until every client has moved about
    // twice (on PostgreSQL, 1.5 s of it once made 395 requests, 12 a client, and none had moved).
    const MOVE_AFTER = FAILURES / 4;
    const agents: http.Agent[] = [];
    let addresses = 0;
    const clients = Array.from({ length: 32 }, () => ({ agent: null as http.Agent | null, sent: 0 }));
    const { ratio, made } = await besideFlood(
      'made-up keys and none from ever new addresses',
      32,
      (n) => {
        const client = clients[n];
        if (client.agent === null || client.sent >= MOVE_AFTER) {
          addresses++;
          const localAddress = `127.0.${10 + Math.floor(addresses / 250)}.${1 + (addresses % 250)}`;
          client.agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress });
          agents.push(client.agent);
          client.sent = 0;
        }
        client.sent++;
        return send('', tools(), n % 2 === 0 ? madeUpKey() : undefined, client.agent);
      },
      () => addresses > 3 * 32,
    );
    for (const agent of agents) agent.destroy();
    expect(made).toBeGreaterThan(FAILURES);
    expect(addresses).toBeGreaterThan(3 * 32);
    expect(ratio).toBeLessThan(3);
  }, 60_000);

  it("[sec-127] keeps another tenant's calls about as fast beside 20 clients reading the OpenAPI document; a current ETag gets 304", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 20, localAddress: '127.0.0.8' });
    try {
      const first = await send('', '/openapi.json', undefined, agent);
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ openapi: '3.1.0' });
      const etag = first.headers.etag!;
      expect(etag).toMatch(/^"[\w-]+"$/);
      const again = await t.http.get('/openapi.json').set('If-None-Match', etag);
      expect(again.status).toBe(304);
      const { ratio, made } = await besideFlood('the OpenAPI document from one address', 20, () =>
        send('', '/openapi.json', undefined, agent),
      );
      expect(made).toBeGreaterThan(20);
      expect(ratio).toBeLessThan(3);
    } finally {
      agent.destroy();
    }
  }, 60_000);

  it('[sec-127] looks a key up once per request: checked before the body, the guard uses what was found', async () => {
    const keys = t.app.get(ApiKeysService);
    const authenticate = jest.spyOn(keys, 'authenticate');
    try {
      expect((await send('127.0.0.7', tools(), tenant.key)).status).toBe(200);
      expect((await send('127.0.0.7', tools(), madeUpKey())).status).toBe(401);
      expect(authenticate).toHaveBeenCalledTimes(2);
    } finally {
      authenticate.mockRestore();
    }
  });
});
