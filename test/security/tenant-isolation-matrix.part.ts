import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Test } from 'supertest';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// Built from the OpenAPI document, i.e. from the routes the app actually serves: a new route that takes
// an id is in this matrix by itself, and fails it unless another tenant's id answers like a missing one.
describe('[sec-40] tenant isolation matrix', () => {
  let t: TestApp;
  let owner: TestTenant;
  let intruder: TestTenant;
  const ids: Record<string, string> = {};

  const skillBody = (version: string) => ({
    name: 'matrix-skill',
    version,
    description: 'for the isolation matrix',
    tools: [
      {
        name: 'matrix_echo',
        description: 'echo',
        inputSchema: { type: 'object', properties: { x: { type: 'string' } }, additionalProperties: false },
        executor: { type: 'command', argv: ['echo', '{{x}}'] },
      },
    ],
  });

  // A valid body for each route that takes one, so that only the ownership check can refuse the call.
  const bodies: Record<string, () => object> = {
    'PATCH /v1/projects/{projectId}': () => ({ name: 'renamed' }),
    'POST /v1/projects/{projectId}/tools/{toolName}/invoke': () => ({ arguments: { path: 'a.txt' } }),
    'POST /v1/projects/{projectId}/skills': () => ({ skillId: ids.skillId }),
    'PUT /v1/skills/{skillId}': () => skillBody('9.9.9'),
    'POST /v1/projects/{projectId}/toolsets': () => ({ ...TOOLSET, slug: 'matrix-other' }),
    'PUT /v1/projects/{projectId}/toolsets/{slug}': () => TOOLSET,
    'POST /v1/projects/{projectId}/toolsets/{slug}/tools/{toolName}/invoke': () => ({ arguments: { path: 'a.txt' } }),
    'POST /v1/oauth/requests/{requestId}/decision': () => ({ approve: false }),
    'PUT /v1/projects/{projectId}/policies': () => ({ text: '' }),
    'PATCH /v1/auth-providers/{providerId}': () => ({ name: 'renamed' }),
    'POST /v1/projects/{projectId}/policies/check': () => ({ tool: 'read_file', arguments: { path: 'a.txt' } }),
    // A public address: only the project's ownership can refuse it (nothing is sent to it here).
    'POST /v1/projects/{projectId}/approval-routes': () => ({ kind: 'slack', url: 'https://hooks.slack.com/services/T0/B0/matrix' }),
  };
  const TOOLSET = { slug: 'matrix-set', name: 'Matrix', mode: 'direct', tools: [{ select: 'read_file' }] };

  // Required query parameters, likewise.
  const queries: Record<string, string> = {
    'GET /v1/projects/{projectId}/workspace/file': '?path=a.txt',
  };

  beforeAll(async () => {
    t = await createTestApp();
    [owner, intruder] = [await t.createTenant(), await t.createTenant()];
    const project = await t.createProject(owner, { shellEnabled: true, shellAllowlist: ['echo'] });
    ids.projectId = project.id;
    ids.toolName = 'read_file';
    const skill = await t.http.post('/v1/skills').set(owner.auth).send(skillBody('1.0.0')).expect(201);
    ids.skillId = skill.body.id;
    await t.http.post(`/v1/projects/${project.id}/skills`).set(owner.auth).send({ skillId: skill.body.id }).expect(201);
    const call = await t.http
      .post(`/v1/projects/${project.id}/tools/list_files/invoke`)
      .set(owner.auth)
      .send({ arguments: {} })
      .expect(200);
    ids.invocationId = call.body.invocationId;
    ids.keyId = (await t.http.get('/v1/api-keys').set(owner.auth).expect(200)).body.items[0].id;
    await t.http.post(`/v1/projects/${project.id}/toolsets`).set(owner.auth).send(TOOLSET).expect(201);
    ids.slug = TOOLSET.slug;
    // An approval route of the owner's project (its URL plays no part: no call parks here).
    ids.routeId = randomUUID();
    await t.database.driver.query(
      `INSERT INTO approval_routes (id, tenant_id, project_id, kind, url) VALUES ($1, $2, $3, 'slack', 'https://hooks.slack.com/services/T0/B0/owner')`,
      [ids.routeId, owner.id, project.id],
    );
    // A definition change waiting for review, as a refresh of an MCP source records one.
    // An auth provider of the owner's and one person's connection to it (their secrets play no part here).
    ids.providerId = randomUUID();
    await t.database.driver.query(
      `INSERT INTO auth_providers (id, tenant_id, slug, name, metadata, client_id, client_secret, updated_at) VALUES ($1, $2, 'matrix', 'Matrix', '{}', 'c', 'sealed', now())`,
      [ids.providerId, owner.id],
    );
    ids.connectionId = randomUUID();
    await t.database.driver.query(
      `INSERT INTO connections (id, tenant_id, provider_id, end_user, status, updated_at) VALUES ($1, $2, $3, 'alice', 'active', now())`,
      [ids.connectionId, owner.id, ids.providerId],
    );
    ids.changeId = randomUUID();
    await t.database.driver.query(
      `INSERT INTO skill_tool_changes (id, tenant_id, skill_id, tool, kind, status, diff, flags) VALUES ($1, $2, $3, 'matrix_echo', 'changed', 'pending', '{}', '[]')`,
      [ids.changeId, owner.id, ids.skillId],
    );
    // An authorization request for the owner's project, waiting for its consent.
    const metadata = await t.http.get(`/.well-known/oauth-protected-resource/v1/projects/${project.id}/mcp`).expect(200);
    const redirect = 'http://127.0.0.1:9/callback';
    const client = await t.http
      .post('/oauth/register')
      .send({ client_name: 'Matrix', redirect_uris: [redirect] })
      .expect(201);
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    const authorized = await t.http.get('/oauth/authorize').query({
      response_type: 'code',
      client_id: client.body.client_id as string,
      redirect_uri: redirect,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: metadata.body.resource as string,
      state: 's',
    });
    expect(authorized.status).toBe(302);
    ids.requestId = new URL(authorized.headers.location).searchParams.get('request')!;
  });
  afterAll(() => t.close());

  it('answers every id-taking tenant route with 404, byte for byte like a random id', async () => {
    const doc = (await t.http.get('/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>;
    };
    const checked: string[] = [];
    for (const [template, operations] of Object.entries(doc.paths)) {
      const params = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      if (params.length === 0) continue;
      for (const [method, operation] of Object.entries(operations)) {
        const tenantRoute = (operation.security ?? []).some((s) => 'tenant-api-key' in s);
        if (!tenantRoute) continue;
        const route = `${method.toUpperCase()} ${template}`;
        for (const p of params) expect({ route, param: p, fixture: ids[p] !== undefined }).toEqual({ route, param: p, fixture: true });
        const url = (values: Record<string, string>) =>
          template.replace(/\{(\w+)\}/g, (_, p: string) => values[p]) + (queries[route] ?? '');
        const random = Object.fromEntries(params.map((p) => [p, p === 'toolName' ? ids.toolName : randomUUID()]));
        const send = (path: string): Test => {
          const req = (t.http as unknown as Record<string, (u: string) => Test>)[method](path).set(intruder.auth);
          const body = bodies[route];
          return body ? req.send(body()) : req;
        };
        const foreign = await send(url(ids));
        const missing = await send(url(random));
        const strip = (text: string) =>
          Object.values(ids)
            .concat(Object.values(random))
            .reduce((acc, id) => acc.split(id).join('<id>'), text.replace(/"requestId":"[^"]+"/, ''));
        expect({ route, status: foreign.status }).toEqual({ route, status: 404 });
        expect({ route, body: strip(foreign.text) }).toEqual({ route, body: strip(missing.text) });
        checked.push(route);
      }
    }
    // The owner's resources are all still there and unchanged.
    const project = await t.http.get(`/v1/projects/${ids.projectId}`).set(owner.auth).expect(200);
    expect(project.body.name).not.toBe('renamed');
    expect((await t.http.get(`/v1/skills/${ids.skillId}`).set(owner.auth).expect(200)).body.version).toBe('1.0.0');
    await t.http.get(`/v1/projects/${ids.projectId}/invocations/${ids.invocationId}`).set(owner.auth).expect(200);
    expect(checked.length).toBeGreaterThanOrEqual(15);
  });
});
