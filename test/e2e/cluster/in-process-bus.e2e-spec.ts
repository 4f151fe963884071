import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';

// One process on PGlite: the change bus is in-process, and a change is seen by the next request at once.
describe('the in-process change bus (one instance)', () => {
  let t: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    t = await createTestApp({ env: { CHANGE_BUS: 'in-process', API_KEY_CACHE_TTL_MS: '600000' } });
    tenant = await t.createTenant();
  });
  afterAll(() => t.close());

  it('is reported as in-process and connected', async () => {
    const ready = await t.http.get('/health/ready').set(t.admin).expect(200);
    expect(ready.body.changeBus).toEqual({ mode: 'in-process', connected: true, instanceId: expect.stringMatching(/^[0-9a-f]{8}$/) });
  });

  it('refuses a revoked key on the very next request, although the key cache lives ten minutes', async () => {
    const other = await t.createTenant();
    await t.http.get('/v1/projects').set(other.auth).expect(200);
    const keys = await t.http.get('/v1/api-keys').set(other.auth).expect(200);
    await t.http
      .delete(`/v1/api-keys/${(keys.body.items ?? keys.body)[0].id}`)
      .set(other.auth)
      .expect(204);
    await t.http.get('/v1/projects').set(other.auth).expect(401);
  });

  it('drops the tool settings of a project on update: shell_exec is refused right after it is disabled', async () => {
    const project = await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['printf'] });
    const call = () =>
      t.http
        .post(`/v1/projects/${project.id}/tools/shell_exec/invoke`)
        .set(tenant.auth)
        .send({ arguments: { argv: ['printf', 'x'] } });
    expect((await call().expect(200)).body.result.stdout).toBe('x');
    await t.http.patch(`/v1/projects/${project.id}`).set(tenant.auth).send({ shellEnabled: false }).expect(200);
    expect((await call().expect(403)).body.error.code).toBe('shell_disabled');
  });
});
