import { randomBytes } from 'node:crypto';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('per-tenant rate limits', () => {
  let t: TestApp;
  afterEach(() => t?.close());

  it("[sec-42] throttles a tenant's burst with 429 and Retry-After, and leaves another tenant alone", async () => {
    t = await createTestApp({ env: { RATE_LIMIT_REQUESTS: '10', RATE_LIMIT_WINDOW_MS: '60000', RATE_LIMIT_SIGN_IN: '3' } });
    const [a, b] = [await t.createTenant(), await t.createTenant()];
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await t.http.get('/v1/projects').set(a.auth)).status);
    expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
    const limited = await t.http.get('/v1/projects').set(a.auth).expect(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    await t.http.get('/v1/projects').set(b.auth).expect(200);
    // Health and the docs are not tenant routes and stay open.
    await t.http.get('/health/live').expect(200);

    // The OAuth sign-in routes have no tenant yet: registrations and authorization requests count per address.
    const register = () => t.http.post('/oauth/register').send({ client_name: 'Flood', redirect_uris: ['http://127.0.0.1:9/cb'] });
    const clientId = (await register().expect(201)).body.client_id as string;
    await t.http.get('/oauth/authorize').query({ client_id: clientId, redirect_uri: 'http://127.0.0.1:9/cb' }).expect(302);
    await register().expect(201);
    const flooded = await register().expect(429);
    expect([flooded.body.error.code, Number(flooded.headers['retry-after']) > 0]).toEqual(['rate_limited', true]);
    const authorizeFlooded = await t.http.get('/oauth/authorize').query({ client_id: clientId, redirect_uri: 'http://127.0.0.1:9/cb' });
    expect(authorizeFlooded.status).toBe(429);
    // Token requests (each exchange or refresh writes a token pair) count per address too, apart from the
    // registrations: a client refreshing does not use up what sign-ins from its address may take.
    const exchange = () =>
      t.http.post('/oauth/token').type('form').send({ grant_type: 'refresh_token', refresh_token: 'tgr_guess', client_id: clientId });
    for (let i = 0; i < 3; i++) expect((await exchange()).body.error).toBe('invalid_grant');
    const tokenFlooded = await exchange().expect(429);
    expect([tokenFlooded.body.error.code, tokenFlooded.body.error.message, Number(tokenFlooded.headers['retry-after']) > 0]).toEqual([
      'rate_limited',
      expect.stringMatching(/^Too many OAuth token requests for this address: at most 3 per 60 s/),
      true,
    ]);
    // Tenant routes count on their own.
    await t.http.get('/v1/projects').set(b.auth).expect(200);
  });

  it('gives shell_exec a tighter bucket than other calls', async () => {
    t = await createTestApp({ env: { RATE_LIMIT_REQUESTS: '100', RATE_LIMIT_COMMAND_CALLS: '2' } });
    const tenant = await t.createTenant();
    const project = await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['true'] });
    const shell = () =>
      t.http
        .post(`/v1/projects/${project.id}/tools/shell_exec/invoke`)
        .set(tenant.auth)
        .send({ arguments: { argv: ['true'] } });
    await shell().expect(200);
    await shell().expect(200);
    const limited = await shell().expect(429);
    expect(limited.headers['retry-after']).toBeDefined();
    // Other tools of the same tenant still run.
    await t.http.post(`/v1/projects/${project.id}/tools/list_files/invoke`).set(tenant.auth).send({ arguments: {} }).expect(200);
  });

  it('shares the counters between instances through Redis (REDIS_URL)', async () => {
    const { Redis } = await import('ioredis');
    const probe = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
    await probe.connect();
    await probe.quit();
    t = await createTestApp({ env: { RATE_LIMIT_REQUESTS: '6', REDIS_URL: 'redis://127.0.0.1:6379' } });
    const tenant = await t.createTenant(`redis-${randomBytes(4).toString('hex')}`);
    // A second instance on the same database and Redis.
    const second = await createTestApp({ env: { RATE_LIMIT_REQUESTS: '6', REDIS_URL: 'redis://127.0.0.1:6379' }, database: t.database });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        statuses.push((await t.http.get('/v1/projects').set(tenant.auth)).status);
        statuses.push((await second.http.get('/v1/projects').set(tenant.auth)).status);
      }
      // Six allowed in total across both instances, then 429 on either.
      expect(statuses.filter((s) => s === 200)).toHaveLength(6);
      expect(statuses.slice(6)).toEqual([429, 429]);
    } finally {
      await second.close();
    }
  });
});
