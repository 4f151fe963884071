import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

describe('the HTTP surface', () => {
  let t: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    t = await createTestApp({ env: { BODY_LIMIT_BYTES: '2048' } });
    tenant = await t.createTenant();
  });
  afterAll(() => t.close());

  const expectShape = (body: unknown, code: string) =>
    expect(body).toEqual({ error: { code, message: expect.any(String) }, requestId: expect.any(String) });

  it('answers an unknown route with the one error shape and the request id header', async () => {
    const res = await t.http.get('/v1/nothing-here').set(tenant.auth).expect(404);
    expectShape(res.body, 'route_not_found');
    expect(res.headers['x-request-id']).toBe(res.body.requestId);
  });

  // Fastify's router once answered both in bodies of its own (a 414 for a path segment past 100 characters,
  // quoting the whole path), before any hook: no request id, no audit row.
  it('answers a long tool name and an undecodable path in the one error shape on either adapter', async () => {
    const { id } = await t.createProject(tenant, {});
    for (const length of [150, 4000]) {
      const res = await t.http
        .post(`/v1/projects/${id}/tools/${'x'.repeat(length)}/invoke`)
        .set(tenant.auth)
        .send({ arguments: {} })
        .expect(404);
      expect(res.body).toMatchObject({ error: { code: 'tool_not_found' }, requestId: res.headers['x-request-id'] });
    }
    const log = await t.http.get(`/v1/projects/${id}/invocations`).set(tenant.auth).expect(200);
    expect(log.body.items.map((i: { status: string; errorCode: string }) => [i.status, i.errorCode])).toEqual([
      ['denied', 'tool_not_found'],
      ['denied', 'tool_not_found'],
    ]);
    for (const url of [`/v1/projects/${id}/tools/%ff/invoke`, '/v1/projects/%ff']) {
      const res = await t.http.post(url).set(tenant.auth).send({ arguments: {} }).expect(400);
      expectShape(res.body, 'bad_request');
      expect(res.body.error.message).toBe('The request path has an invalid percent-encoding');
      expect(res.headers['x-request-id']).toBe(res.body.requestId);
    }
  });

  it('keeps a well-formed request id sent by the client', async () => {
    const res = await t.http.get('/health/live').set('x-request-id', 'client-trace-1234').expect(200);
    expect(res.headers['x-request-id']).toBe('client-trace-1234');
    const bad = await t.http.get('/health/live').set('x-request-id', 'bad id with spaces').expect(200);
    expect(bad.headers['x-request-id']).not.toBe('bad id with spaces');
  });

  it('[sec-38] answers invalid JSON with 400 and an oversized body with 413, and keeps serving', async () => {
    const bad = await t.http.post('/v1/projects').set(tenant.auth).set('content-type', 'application/json').send('{"name": ').expect(400);
    expectShape(bad.body, 'invalid_json');
    const big = await t.http
      .post('/v1/projects')
      .set(tenant.auth)
      .send({ name: 'x'.repeat(4096), slug: 'big' })
      .expect(413);
    expectShape(big.body, 'payload_too_large');
    const nested = await t.http
      .post('/v1/projects')
      .set(tenant.auth)
      .set('content-type', 'application/json')
      .send('['.repeat(1000) + ']'.repeat(1000));
    expect([400, 413]).toContain(nested.status);
    await t.http.get('/health/live').expect(200);
  });

  it('logs requests as JSON with the request id and never the API key', async () => {
    const res = await t.http.get('/v1/projects').set(tenant.auth).expect(200);
    const line = t.logs.find((l) => l.requestId === res.headers['x-request-id'] && l.msg === 'request');
    expect(line).toMatchObject({ method: 'GET', path: '/v1/projects', status: 200, level: 'info' });
    expect(JSON.stringify(t.logs)).not.toContain(tenant.key);
  });

  it('reports liveness and readiness: the status to anyone, the details to the operator', async () => {
    expect((await t.http.get('/health/live').expect(200)).body).toEqual({ status: 'ok' });
    expect((await t.http.get('/health/ready').expect(200)).body).toEqual({ status: 'ok' });
    expect((await t.http.get('/health/ready').set(tenant.auth).expect(200)).body).toEqual({ status: 'ok' });
    expect((await t.http.get('/health/ready').set(t.admin).expect(200)).body).toEqual({
      status: 'ok',
      commandSandbox: expect.objectContaining({ ready: true }),
      // In-process on PGlite; LISTEN/NOTIFY when the suite runs on PostgreSQL.
      auditQueue: { pending: expect.any(Number), capacity: expect.any(Number) },
      changeBus: expect.objectContaining({ mode: t.database.url ? 'postgres' : 'in-process', connected: true }),
      rateLimitStore: { mode: 'memory', ready: true },
    });
  });

  it('publishes an OpenAPI 3 document with every route, the error shape and both bearer schemes', async () => {
    const doc = (await t.http.get('/openapi.json').expect(200)).body;
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['admin-token', 'tenant-api-key']);
    expect(doc.components.schemas.ErrorResponseDto).toBeDefined();
    const routes = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(routes).toEqual(
      expect.arrayContaining([
        'POST /v1/admin/tenants',
        'GET /v1/admin/tenants',
        'DELETE /v1/admin/tenants/{tenantId}',
        'POST /v1/admin/tenants/{tenantId}/api-keys',
        'DELETE /v1/admin/tenants/{tenantId}/api-keys/{keyId}',
        'GET /v1/api-keys',
        'DELETE /v1/api-keys/{keyId}',
        'POST /v1/projects',
        'GET /v1/projects',
        'GET /v1/projects/{projectId}',
        'PATCH /v1/projects/{projectId}',
        'DELETE /v1/projects/{projectId}',
        'GET /v1/projects/{projectId}/workspace',
        'GET /v1/projects/{projectId}/workspace/files',
        'GET /v1/projects/{projectId}/workspace/file',
        'GET /health/live',
        'GET /health/ready',
      ]),
    );
    // Every route declares its security: a scheme, or none together with why it is public (the OAuth routes
    // by their protocol, health for load balancers). Every route but health declares at least one refusal.
    type Operation = { security?: unknown[]; 'x-toolgate-public'?: unknown; responses: Record<string, unknown> };
    for (const [p, ops] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, op] of Object.entries(ops)) {
        const route = `${method} ${p}`;
        const publicWhy = op['x-toolgate-public'];
        const secured =
          op.security !== undefined &&
          (op.security.length > 0 ? publicWhy === undefined : typeof publicWhy === 'string' && publicWhy.length > 0);
        expect({ route, secured }).toEqual({ route, secured: true });
        if (!p.startsWith('/health'))
          expect({ route, errors: Object.keys(op.responses).some((s) => s.startsWith('4')) }).toEqual({ route, errors: true });
      }
    }
    await t.http.get('/docs').redirects(1).expect(200);
  });
});
