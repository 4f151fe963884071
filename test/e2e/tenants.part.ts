import { randomUUID } from 'node:crypto';
import { eventually } from '../support/eventually.js';
import { ADMIN_TOKEN, createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

describe('tenants and API keys', () => {
  let t: TestApp;
  let acme: TestTenant;

  beforeAll(async () => {
    t = await createTestApp();
    acme = await t.createTenant('acme');
  });
  afterAll(() => t.close());

  it('lets the admin create, list and delete tenants', async () => {
    const created = await t.http.post('/v1/admin/tenants').set(t.admin).send({ name: 'short-lived' }).expect(201);
    expect(created.body).toMatchObject({ id: expect.any(String), name: 'short-lived' });
    const list = await t.http.get('/v1/admin/tenants').set(t.admin).expect(200);
    expect(list.body.items.map((x: { name: string }) => x.name)).toEqual(expect.arrayContaining(['acme', 'short-lived']));
    await t.http.delete(`/v1/admin/tenants/${created.body.id}`).set(t.admin).expect(204);
    await t.http.delete(`/v1/admin/tenants/${created.body.id}`).set(t.admin).expect(404);
  });

  it('answers 409 for a duplicate tenant name and 400 naming a bad field', async () => {
    const dup = await t.http.post('/v1/admin/tenants').set(t.admin).send({ name: 'acme' }).expect(409);
    expect(dup.body.error.code).toBe('tenant_name_taken');
    const bad = await t.http.post('/v1/admin/tenants').set(t.admin).send({ name: '', extra: 1 }).expect(400);
    expect(bad.body.error.code).toBe('validation_failed');
    expect(bad.body.error.message).toMatch(/extra/);
  });

  it('shows the full key once and stores only its hash', async () => {
    const issued = await t.http.post(`/v1/admin/tenants/${acme.id}/api-keys`).set(t.admin).send({ name: 'ci' }).expect(201);
    expect(issued.body.key).toMatch(/^tg_[0-9a-f]{12}_[0-9a-f]{64}$/);
    const listed = await t.http.get('/v1/api-keys').set(acme.auth).expect(200);
    const entry = listed.body.items.find((k: { id: string }) => k.id === issued.body.id);
    expect(entry).toEqual({
      id: issued.body.id,
      name: 'ci',
      prefix: issued.body.prefix,
      createdAt: expect.any(String),
      lastUsedAt: null,
      role: 'admin',
      projectIds: [],
      tools: [],
      expiresAt: null,
      toolset: null,
      oauthResource: null,
      oauthConsentedByKeyId: null,
      parksEveryCall: false,
      actAsUsers: false,
    });
    expect(JSON.stringify(listed.body)).not.toContain(issued.body.key.split('_')[2]);
    const rows = await t.database.driver.withSession((s) =>
      s.query<{ key_hash: Buffer }>('SELECT key_hash FROM api_keys WHERE id = $1', [issued.body.id]),
    );
    expect(Buffer.from(rows[0].key_hash).toString('hex')).not.toContain(issued.body.key.split('_')[2]);
    expect(Buffer.from(rows[0].key_hash)).toHaveLength(32);
  });

  it('records when a key was last used', async () => {
    await t.http.get('/v1/projects').set(acme.auth).expect(200);
    const at = await eventually(async () => {
      const value = await lastUsed(acme);
      expect(value).not.toBeNull();
      return value;
    });
    expect(Date.now() - Date.parse(at!)).toBeLessThan(60_000);
  });

  it('[sec-41] answers 401 without a key, with a wrong key and with a revoked key', async () => {
    const tenant = await t.createTenant();
    await t.http.get('/v1/projects').set(tenant.auth).expect(200);
    expect((await t.http.get('/v1/projects').expect(401)).body.error.code).toBe('unauthorized');
    await t.http.get('/v1/projects').set({ Authorization: 'Bearer nonsense' }).expect(401);
    const forged = tenant.key.slice(0, -4) + (tenant.key.endsWith('0000') ? '1111' : '0000');
    await t.http
      .get('/v1/projects')
      .set({ Authorization: `Bearer ${forged}` })
      .expect(401);

    const keys = await t.http.get('/v1/api-keys').set(tenant.auth).expect(200);
    await t.http.delete(`/v1/api-keys/${keys.body.items[0].id}`).set(tenant.auth).expect(204);
    const revoked = await t.http.get('/v1/projects').set(tenant.auth).expect(401);
    expect(revoked.body.error.message).toMatch(/revoked|invalid/);
  });

  it('lets a tenant issue itself another key, which works at once and is listed for it and for the admin', async () => {
    const tenant = await t.createTenant();
    const issued = await t.http.post('/v1/api-keys').set(tenant.auth).send({ name: 'rotation' }).expect(201);
    expect(issued.body).toMatchObject({
      name: 'rotation',
      tenantId: tenant.id,
      key: expect.stringMatching(/^tg_[0-9a-f]{12}_[0-9a-f]{64}$/),
    });
    await t.http
      .get('/v1/projects')
      .set({ Authorization: `Bearer ${issued.body.key}` })
      .expect(200);
    const own = await t.http.get('/v1/api-keys').set(tenant.auth).expect(200);
    const byAdmin = await t.http.get(`/v1/admin/tenants/${tenant.id}/api-keys`).set(t.admin).expect(200);
    // The same keys either way; lastUsedAt is written after a key's request is answered, so the rotation key's
    // may land between the two reads.
    const withoutLastUse = (items: Array<Record<string, unknown>>) => items.map(({ lastUsedAt: _lastUsedAt, ...key }) => key);
    expect(withoutLastUse(byAdmin.body.items)).toEqual(withoutLastUse(own.body.items));
    expect(own.body.items.map((k: { name: string }) => k.name).sort()).toEqual(['decider', 'default', 'rotation']);
    expect(JSON.stringify(byAdmin.body)).not.toContain(issued.body.key.split('_')[2]);
    // Another tenant's keys are not the admin list of this one, and the admin list needs the admin token.
    await t.http.get(`/v1/admin/tenants/${tenant.id}/api-keys`).set(acme.auth).expect(403);
    const missing = await t.http.get(`/v1/admin/tenants/${randomUUID()}/api-keys`).set(t.admin).expect(404);
    expect(missing.body.error.code).toBe('tenant_not_found');
  });

  it('lets the admin revoke a key, effective at once', async () => {
    const tenant = await t.createTenant();
    await t.http.get('/v1/projects').set(tenant.auth).expect(200);
    const keys = await t.http.get('/v1/api-keys').set(tenant.auth).expect(200);
    await t.http.delete(`/v1/admin/tenants/${tenant.id}/api-keys/${keys.body.items[0].id}`).set(t.admin).expect(204);
    await t.http.get('/v1/projects').set(tenant.auth).expect(401);
  });

  it("[sec-41] answers 403 for a tenant key on an admin route, and 404 for another tenant's key id", async () => {
    const res = await t.http.get('/v1/admin/tenants').set(acme.auth).expect(403);
    expect(res.body.error.code).toBe('forbidden');
    await t.http.get('/v1/admin/tenants').set({ Authorization: 'Bearer wrong-admin-token' }).expect(401);
    await t.http
      .get('/v1/projects')
      .set({ Authorization: `Bearer ${ADMIN_TOKEN}` })
      .expect(403);

    const other = await t.createTenant();
    const otherKeys = await t.http.get('/v1/api-keys').set(other.auth).expect(200);
    const foreignId = otherKeys.body.items[0].id as string;
    const foreign = await t.http.delete(`/v1/api-keys/${foreignId}`).set(acme.auth).expect(404);
    expect(foreign.body.error).toEqual({ code: 'api_key_not_found', message: `No API key with id '${foreignId}'` });
    await t.http.get('/v1/projects').set(other.auth).expect(200);
  });

  async function lastUsed(tenant: TestTenant): Promise<string | null> {
    const listed = await t.http.get('/v1/api-keys').set(tenant.auth).expect(200);
    return listed.body.items.find((k: { prefix: string }) => tenant.key.includes(`_${k.prefix}_`))?.lastUsedAt ?? null;
  }
});
