import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// docs/security-model.md, "Integrity": no audit row is lost.
describe('integrity', () => {
  let t: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
  });
  afterAll(() => t.close());

  const rowsOf = async (projectId: string) =>
    (await t.http.get(`/v1/projects/${projectId}/invocations`).set(tenant.auth).expect(200)).body.items as Array<{
      id: string;
      status: string;
      tool: string;
    }>;

  it('[sec-99] a project deleted while one of its calls runs, or while an approved call runs: the audit row is written and stays', async () => {
    const running = (await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['sleep'] })).id;
    const call = t.http
      .post(`/v1/projects/${running}/tools/shell_exec/invoke`)
      .set(tenant.auth)
      .send({ arguments: { argv: ['sleep', '1'] } })
      .then((r) => r);
    await new Promise((r) => setTimeout(r, 300));
    await t.http.delete(`/v1/projects/${running}`).set(tenant.auth).expect(204);
    const answered = await call;
    expect(answered.status).toBe(200);
    expect((await rowsOf(running)).map((r) => [r.id, r.status])).toEqual([[answered.body.invocationId, answered.body.status]]);

    const approved = (await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['sleep'], approvalRequired: ['shell_exec'] }))
      .id;
    const parked = await t.http
      .post(`/v1/projects/${approved}/tools/shell_exec/invoke`)
      .set(tenant.auth)
      .send({ arguments: { argv: ['sleep', '1'] } })
      .expect(202);
    const decision = t.http
      .post(`/v1/projects/${approved}/invocations/${parked.body.invocationId}/approve`)
      .set(tenant.deciderAuth)
      .send({})
      .then((r) => r);
    await new Promise((r) => setTimeout(r, 300));
    await t.http.delete(`/v1/projects/${approved}`).set(tenant.auth).expect(204);
    await decision;
    const rows = await rowsOf(approved);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: parked.body.invocationId, tool: 'shell_exec' });
    expect(rows[0].status).not.toBe('pending_approval');
  });
});
