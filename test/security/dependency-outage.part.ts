import { createTestApp, type TestApp } from '../support/test-app.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { eventually } from '../support/eventually.js';

// docs/security-model.md case 100: the rate-limit store (Redis) goes down. Readiness says so, tenant requests are
// refused with 503 and Retry-After at once instead of hanging and answering 500 (or pass, when the operator
// chose RATE_LIMIT_ON_STORE_ERROR=allow), and everything is back when Redis is.
describe('[sec-100] the rate-limit store down', () => {
  let proxy: TcpProxy;
  let t: TestApp;

  beforeAll(async () => {
    proxy = new TcpProxy('127.0.0.1', 6379);
    await proxy.start();
    t = await createTestApp({ env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}`, RATE_LIMIT_STORE_TIMEOUT_MS: '300' } });
  });
  afterAll(async () => {
    await t.close();
    await proxy.stop();
  });

  it('answers 503 with Retry-After within a second, readiness 503, then recovers by itself', async () => {
    const tenant = await t.createTenant();
    await t.http.get('/v1/projects').set(tenant.auth).expect(200);
    await t.http.get('/health/ready').expect(200);
    const details = await t.http.get('/health/ready').set(t.admin).expect(200);
    expect(details.body.rateLimitStore).toEqual({ mode: 'redis', ready: true });

    await proxy.cut();
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const res = await t.http.get('/v1/projects').set(tenant.auth);
      const took = Date.now() - started;
      expect({ status: res.status, code: res.body.error?.code, retryAfter: res.headers['retry-after'] }).toEqual({
        status: 503,
        code: 'rate_limit_unavailable',
        retryAfter: '1',
      });
      // Bounded by RATE_LIMIT_STORE_TIMEOUT_MS (300 ms), far under the second the case allows.
      expect(took).toBeLessThan(1000);
    }
    const ready = await t.http.get('/health/ready');
    expect([ready.status, ready.body.error?.code]).toEqual([503, 'rate_limit_store_unavailable']);
    expect(JSON.stringify(ready.body)).not.toContain(String(proxy.port));

    await proxy.restore();
    await eventually(async () => expect((await t.http.get('/v1/projects').set(tenant.auth)).status).toBe(200), 100, 150);
    await t.http.get('/health/ready').expect(200);
  });

  it('lets requests through uncounted under RATE_LIMIT_ON_STORE_ERROR=allow, and readiness stays green with the store marked down', async () => {
    const dead = new TcpProxy('127.0.0.1', 6379);
    await dead.start();
    const port = dead.port;
    await dead.cut();
    const allow = await createTestApp({
      env: { REDIS_URL: `redis://127.0.0.1:${port}`, RATE_LIMIT_ON_STORE_ERROR: 'allow', RATE_LIMIT_STORE_TIMEOUT_MS: '300' },
    });
    try {
      const tenant = await allow.createTenant();
      await allow.http.get('/v1/projects').set(tenant.auth).expect(200);
      const details = await allow.http.get('/health/ready').set(allow.admin).expect(200);
      expect(details.body.rateLimitStore).toEqual({ mode: 'redis', ready: false });
    } finally {
      await allow.close();
    }
  });
});
