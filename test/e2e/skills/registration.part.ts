import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { commandTool, expectError, listSkills, postSkill, registerSkill, skillOf, STRING_ARG } from './skill-test-kit.js';

// Prints its `word` argument.
const printTool = (name = 'print_word', inputSchema: Record<string, unknown> = STRING_ARG('word')) =>
  commandTool(name, ['printf', '%s', '{{word}}'], inputSchema);

describe('skill registration', () => {
  let t: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
  });
  afterAll(() => t.close());

  it('registers a skill and returns its signing secret once; reading it back never shows the secret', async () => {
    const body = skillOf([printTool()], { description: 'Prints words' });
    const created = await postSkill(t, tenant, body).expect(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: body.name,
      version: '1.0.0',
      description: 'Prints words',
      // Pinned as registered: the hash of each definition, and when.
      tools: body.tools.map((tool) => ({
        ...tool,
        pin: { hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), reviewedAt: expect.any(String) },
      })),
      source: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      signingSecret: expect.stringMatching(/^tgs_[0-9a-f]{64}$/),
    });
    const { signingSecret, ...withoutSecret } = created.body as { signingSecret: string } & Record<string, unknown>;

    const one = await t.http.get(`/v1/skills/${created.body.id}`).set(tenant.auth).expect(200);
    expect(one.body).toEqual(withoutSecret);
    const list = await t.http.get('/v1/skills').query({ limit: 100 }).set(tenant.auth).expect(200);
    expect(list.body.items).toContainEqual(withoutSecret);
    for (const text of [one.text, list.text]) expect(text).not.toContain(signingSecret);

    // Every registration gets a secret of its own.
    const other = await registerSkill(t, tenant, skillOf([printTool()]));
    expect(other.signingSecret).not.toBe(signingSecret);
  });

  it('pages through the tenant’s skills with a cursor, oldest first, and refuses a forged cursor', async () => {
    const owner = await t.createTenant();
    const names: string[] = [];
    for (let i = 0; i < 5; i++) names.push((await registerSkill(t, owner, skillOf([printTool()]))).name);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { body: { items: Array<{ name: string }>; nextCursor: string | null } } = await t.http
        .get('/v1/skills')
        .query({ limit: 2, ...(cursor ? { cursor } : {}) })
        .set(owner.auth)
        .expect(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.items.map((s) => s.name));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(names);
    expectError(await t.http.get('/v1/skills').query({ cursor: 'not-a-cursor' }).set(owner.auth), 400, 'invalid_cursor');
    expectError(await t.http.get('/v1/skills').query({ limit: 0 }).set(owner.auth), 400, 'validation_failed');
  });

  it('answers 404 skill_not_found for an id that names no skill, and for one that is not a uuid', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const error = expectError(await t.http.get(`/v1/skills/${missing}`).set(tenant.auth), 404, 'skill_not_found');
    expect(error.message).toContain(missing);
    expectError(await t.http.get('/v1/skills/not-a-uuid').set(tenant.auth), 404, 'skill_not_found');
  });

  it('refuses a second skill with the same name: 409 skill_name_taken, pointing at PUT', async () => {
    const body = skillOf([printTool()]);
    await registerSkill(t, tenant, body);
    const error = expectError(await postSkill(t, tenant, { ...body, version: '2.0.0' }), 409, 'skill_name_taken');
    expect(error.message).toContain(body.name);
    expect(error.message).toMatch(/PUT/);
    expect((await listSkills(t, tenant)).filter((s) => s.name === body.name)).toHaveLength(1);
  });

  it('refuses a body that is not a skill with 422 invalid_skill naming what is wrong', async () => {
    const good = skillOf([printTool()]);
    const cases: Array<[string, unknown, RegExp]> = [
      ['no tools', { ...good, tools: [] }, /tools/],
      ['a tool without an executor', { ...good, tools: [{ ...good.tools[0], executor: undefined }] }, /executor/],
      ['an unknown executor type', { ...good, tools: [{ ...good.tools[0], executor: { type: 'lambda', argv: ['x'] } }] }, /executor/],
      ['a tool name a model provider refuses', { ...good, tools: [{ ...good.tools[0], name: 'has space' }] }, /name/],
      ['an unknown field', { ...good, owner: 'someone-else' }, /owner/],
      ['the same tool twice', { ...good, tools: [good.tools[0], good.tools[0]] }, /print_word.*twice/],
      ['a url that is not http', { ...good, tools: [{ ...good.tools[0], executor: { type: 'http', url: 'file:///etc/passwd' } }] }, /url/],
    ];
    for (const [label, body, pattern] of cases) {
      const res = await postSkill(t, tenant, body);
      const error = expectError(res, 422, 'invalid_skill');
      expect({ label, message: error.message }).toEqual({ label, message: expect.stringMatching(pattern) });
    }
    expect((await listSkills(t, tenant)).map((s) => s.name)).not.toContain(good.name);
  });

  it('publishes a new version with PUT, keeps the name, and refuses the same version with 409 skill_version_exists', async () => {
    const skill = await registerSkill(t, tenant, skillOf([printTool()]));
    const same = await t.http
      .put(`/v1/skills/${skill.id}`)
      .set(tenant.auth)
      .send(skillOf([printTool('other_tool')], { name: skill.name, version: '1.0.0' }));
    const error = expectError(same, 409, 'skill_version_exists');
    expect(error.message).toContain("'1.0.0'");

    const next = skillOf([printTool('second_tool')], { name: skill.name, version: '1.1.0', description: 'Second version' });
    const updated = await t.http.put(`/v1/skills/${skill.id}`).set(tenant.auth).send(next).expect(200);
    expect(updated.body).toEqual({
      id: skill.id,
      name: skill.name,
      version: '1.1.0',
      description: 'Second version',
      tools: next.tools.map((tool) => ({
        ...tool,
        pin: { hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), reviewedAt: expect.any(String) },
      })),
      source: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(updated.text).not.toContain(skill.signingSecret);
    expect((await t.http.get(`/v1/skills/${skill.id}`).set(tenant.auth).expect(200)).body).toEqual(updated.body);
  });

  it('keeps the current version when a PUT brings a schema that is refused', async () => {
    const skill = await registerSkill(t, tenant, skillOf([printTool()]));
    const refused = skillOf([printTool('print_word', { ...STRING_ARG('word'), $data: '0/x' })], { name: skill.name, version: '2.0.0' });
    expectError(await t.http.put(`/v1/skills/${skill.id}`).set(tenant.auth).send(refused), 422, 'schema_refused');
    const current = await t.http.get(`/v1/skills/${skill.id}`).set(tenant.auth).expect(200);
    expect({ version: current.body.version, tools: current.body.tools }).toEqual({ version: '1.0.0', tools: skill.tools });
  });

  it('deletes a skill: it is gone from GET and from the list, and a second DELETE answers 404', async () => {
    const skill = await registerSkill(t, tenant, skillOf([printTool()]));
    await t.http.delete(`/v1/skills/${skill.id}`).set(tenant.auth).expect(204);
    expectError(await t.http.get(`/v1/skills/${skill.id}`).set(tenant.auth), 404, 'skill_not_found');
    expect((await listSkills(t, tenant)).map((s) => s.id)).not.toContain(skill.id);
    expectError(await t.http.delete(`/v1/skills/${skill.id}`).set(tenant.auth), 404, 'skill_not_found');
    expectError(
      await t.http
        .put(`/v1/skills/${skill.id}`)
        .set(tenant.auth)
        .send(skillOf([printTool()], { version: '9.0.0' })),
      404,
      'skill_not_found',
    );
  });

  it('describes every skill route and its error responses in the OpenAPI document', async () => {
    const doc = (await t.http.get('/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
    };
    const expected: Array<[string, string, string[]]> = [
      ['/v1/skills', 'post', ['201', '409', '422']],
      ['/v1/skills', 'get', ['200']],
      ['/v1/skills/{skillId}', 'get', ['200', '404']],
      ['/v1/skills/{skillId}', 'put', ['200', '404', '409', '422']],
      ['/v1/skills/{skillId}', 'delete', ['204', '404']],
      ['/v1/projects/{projectId}/skills', 'post', ['201', '404', '409']],
      ['/v1/projects/{projectId}/skills', 'get', ['200', '404']],
      ['/v1/projects/{projectId}/skills/{skillId}', 'delete', ['204', '404']],
    ];
    for (const [path, method, statuses] of expected) {
      const operation = doc.paths[path]?.[method];
      expect({ path, method, documented: operation !== undefined }).toEqual({ path, method, documented: true });
      for (const status of statuses) {
        expect({ path, method, status, documented: operation.responses[status] !== undefined }).toEqual({
          path,
          method,
          status,
          documented: true,
        });
      }
    }
    // The registration body is published as the schema the service validates with.
    const body = JSON.stringify(doc.paths['/v1/skills'].post.requestBody);
    for (const field of ['inputSchema', 'executor', 'argv', 'timeoutMs', 'mode']) expect(body).toContain(field);
    const put = JSON.stringify(doc.paths['/v1/skills/{skillId}'].put.responses['409']);
    expect(put).toMatch(/skill_version_exists/);
    expect(put).toMatch(/tool_name_collision/);
  });
});
