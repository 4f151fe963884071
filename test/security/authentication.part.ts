import { ADMIN_TOKEN, createTestApp, type TestApp } from '../support/test-app.js';

describe('[sec-41] authentication', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('[sec-41] answers 401 without a key, with a malformed key, with a forged secret and with a revoked key', async () => {
    const tenant = await t.createTenant();
    await t.http.get('/v1/projects').set(tenant.auth).expect(200);
    const none = await t.http.get('/v1/projects').expect(401);
    expect(none.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) }, requestId: expect.any(String) });
    await t.http.get('/v1/projects').set({ Authorization: 'Bearer not-a-key' }).expect(401);
    await t.http.get('/v1/projects').set({ Authorization: tenant.key }).expect(401);
    const forged = tenant.key.slice(0, -8) + (tenant.key.endsWith('00000000') ? '11111111' : '00000000');
    await t.http
      .get('/v1/projects')
      .set({ Authorization: `Bearer ${forged}` })
      .expect(401);

    const keys = await t.http.get('/v1/api-keys').set(tenant.auth).expect(200);
    await t.http.delete(`/v1/api-keys/${keys.body.items[0].id}`).set(tenant.auth).expect(204);
    // Revocation takes effect at once, although verified keys are cached.
    await t.http.get('/v1/projects').set(tenant.auth).expect(401);
  });

  it('[sec-41] answers 403 for a tenant key on an admin route, and 401 for a wrong admin token', async () => {
    const tenant = await t.createTenant();
    const forbidden = await t.http.get('/v1/admin/tenants').set(tenant.auth).expect(403);
    expect(forbidden.body.error.code).toBe('forbidden');
    await t.http.post('/v1/admin/tenants').set(tenant.auth).send({ name: 'sneaky' }).expect(403);
    await t.http
      .get('/v1/admin/tenants')
      .set({ Authorization: `Bearer ${ADMIN_TOKEN}x` })
      .expect(401);
    await t.http.get('/v1/admin/tenants').expect(401);
    const names = (await t.http.get('/v1/admin/tenants').set(t.admin).expect(200)).body.items.map((x: { name: string }) => x.name);
    expect(names).not.toContain('sneaky');
  });
});
