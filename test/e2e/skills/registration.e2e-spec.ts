import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import {
  callTool,
  commandTool,
  expectError,
  installSkill,
  listSkills,
  postSkill,
  registerSkill,
  skillOf,
  STRING_ARG,
  type SkillBody,
  uniqueName,
} from './skill-test-kit.js';

// Prints its `word` argument.
const printTool = (name = 'print_word', inputSchema: Record<string, unknown> = STRING_ARG('word')) =>
  commandTool(name, ['printf', '%s', '{{word}}'], inputSchema);
// For schemas that must be refused before the argv template is looked at.
const schemaTool = (name: string, inputSchema: Record<string, unknown>) => commandTool(name, ['printf', 'ok'], inputSchema);

// A schema nested `levels` deep through `not`, written as text so building it needs no recursion.
function deepSchemaJson(levels: number): string {
  return `{"type":"object","properties":{"deep":${'{"not":'.repeat(levels)}{"type":"string"}${'}'.repeat(levels)}}}`;
}

describe('skill registration', () => {
  let t: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
  });
  afterAll(() => t.close());

  // Registers a body that must be refused, and checks that nothing named like it was stored.
  async function expectRefusedAndNotStored(body: SkillBody | string, status: number, code: string) {
    const name = typeof body === 'string' ? (JSON.parse(body) as SkillBody).name : body.name;
    const req = t.http.post('/v1/skills').set(tenant.auth);
    const res = typeof body === 'string' ? await req.set('content-type', 'application/json').send(body) : await req.send(body);
    const error = expectError(res, status, code);
    expect((await listSkills(t, tenant)).map((s) => s.name)).not.toContain(name);
    return error;
  }

  it('registers a skill and returns its signing secret once; reading it back never shows the secret', async () => {
    const body = skillOf([printTool()], { description: 'Prints words' });
    const created = await postSkill(t, tenant, body).expect(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: body.name,
      version: '1.0.0',
      description: 'Prints words',
      tools: body.tools,
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
    const same = await t.http.put(`/v1/skills/${skill.id}`).set(tenant.auth).send(skillOf([printTool('other_tool')], { name: skill.name, version: '1.0.0' }));
    const error = expectError(same, 409, 'skill_version_exists');
    expect(error.message).toContain("'1.0.0'");

    const next = skillOf([printTool('second_tool')], { name: skill.name, version: '1.1.0', description: 'Second version' });
    const updated = await t.http.put(`/v1/skills/${skill.id}`).set(tenant.auth).send(next).expect(200);
    expect(updated.body).toEqual({
      id: skill.id,
      name: skill.name,
      version: '1.1.0',
      description: 'Second version',
      tools: next.tools,
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
    expectError(await t.http.put(`/v1/skills/${skill.id}`).set(tenant.auth).send(skillOf([printTool()], { version: '9.0.0' })), 404, 'skill_not_found');
  });

  describe('[sec-33] patterns in tenant schemas', () => {
    let projectId: string;

    beforeAll(async () => {
      projectId = (await t.createProject(tenant, { shellAllowlist: ['printf'] })).id;
    });

    it('[sec-33] validates "^(a+)+$" against "a"*50 + "!" and answers 422 naming the pattern', async () => {
      const tool = printTool('match_as', STRING_ARG('word', { pattern: '^(a+)+$' }));
      await installSkill(t, tenant, projectId, skillOf([tool]));

      const res = await callTool(t, tenant, projectId, 'match_as', { word: `${'a'.repeat(50)}!` });
      const error = expectError(res, 422, 'invalid_arguments');
      expect(error.message).toContain('^(a+)+$');
      expect(error.message).toMatch(/word/);
      expect(error.message).toMatch(/Usage: match_as\(word: string/);

      // The pattern still does its job on input that matches.
      const ok = await callTool(t, tenant, projectId, 'match_as', { word: 'a'.repeat(50) }).expect(200);
      expect(ok.body).toMatchObject({ status: 'ok', result: { stdout: 'a'.repeat(50) } });
    });

    it('[sec-33] refuses at registration a pattern with a backreference or a lookahead, naming where it is', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [STRING_ARG('word', { pattern: '^(a)\\1$' }), '/properties/word/pattern'],
        [STRING_ARG('word', { pattern: '^(?=a)a+$' }), '/properties/word/pattern'],
        [{ type: 'object', patternProperties: { '^(x)\\1$': { type: 'string' } } }, '/patternProperties/^(x)\\1$'],
      ];
      for (const [inputSchema, location] of cases) {
        const error = await expectRefusedAndNotStored(skillOf([schemaTool('backtracking', inputSchema)]), 422, 'schema_refused');
        expect(error.details).toEqual({ tool: 'backtracking', schema: 'inputSchema', location, reason: expect.stringMatching(/backreference|lookaround/) });
        expect(error.message).toContain("Tool 'backtracking'");
        expect(error.message).toContain(location);
      }
    });
  });

  it('[sec-34] refuses a schema 10,000 levels deep at registration and stores nothing', async () => {
    const name = uniqueName('deep');
    const body = JSON.stringify(skillOf([commandTool('deep_tool', ['printf', 'x'], { type: 'object' })], { name })).replace(
      '{"type":"object"}',
      deepSchemaJson(10_000),
    );
    expect(body.length).toBeLessThan(t.config.bodyLimitBytes);
    const error = await expectRefusedAndNotStored(body, 422, 'schema_refused');
    expect(error.details).toEqual({
      tool: 'deep_tool',
      schema: 'inputSchema',
      location: expect.stringMatching(/^\/properties\/deep(\/not)+$/),
      reason: expect.stringMatching(/deeper than \d+ levels/),
    });
    expect(error.message).toContain("Tool 'deep_tool'");
    // Still serving.
    await t.http.get('/v1/skills').set(tenant.auth).expect(200);
  });

  it('[sec-34] refuses a 5 MiB schema with 413 before reading it, and one over the schema size limit with 422', async () => {
    const huge = skillOf([
      commandTool('huge_tool', ['printf', 'x'], { type: 'object', description: 'x'.repeat(5 * 1024 * 1024) }),
    ]);
    const body = JSON.stringify(huge);
    expect(body.length).toBeGreaterThan(t.config.bodyLimitBytes);
    const error413 = await expectRefusedAndNotStored(body, 413, 'payload_too_large');
    expect(error413.message).toMatch(/larger than the limit/);

    const large = skillOf([commandTool('large_tool', ['printf', 'x'], { type: 'object', description: 'x'.repeat(100 * 1024) })]);
    expect(JSON.stringify(large).length).toBeLessThan(t.config.bodyLimitBytes);
    const error = await expectRefusedAndNotStored(large, 422, 'schema_refused');
    expect(error.details).toEqual({ tool: 'large_tool', schema: 'inputSchema', location: '/', reason: expect.stringMatching(/bytes; the limit is \d+/) });
  });

  describe('[sec-35] schema features that reach outside the schema', () => {
    it('[sec-35] refuses $data with 422 naming the tool, the location and the reason; nothing stored', async () => {
      const inputSchema = {
        type: 'object',
        properties: { low: { type: 'number' }, high: { type: 'number', minimum: { $data: '1/low' } } },
      };
      const error = await expectRefusedAndNotStored(skillOf([schemaTool('ranged', inputSchema)]), 422, 'schema_refused');
      expect(error.details).toEqual({ tool: 'ranged', schema: 'inputSchema', location: '/properties/high/minimum/$data', reason: '$data references are not allowed' });
      expect(error.message).toBe("Tool 'ranged': inputSchema/properties/high/minimum/$data refused: $data references are not allowed");
    });

    it('[sec-35] refuses a remote $ref with 422 naming the tool, the location and the reason; nothing stored', async () => {
      const inputSchema = { type: 'object', properties: { address: { $ref: 'https://example.com/s.json' } } };
      const error = await expectRefusedAndNotStored(skillOf([schemaTool('mailer', inputSchema)]), 422, 'schema_refused');
      expect(error.details).toEqual({
        tool: 'mailer',
        schema: 'inputSchema',
        location: '/properties/address/$ref',
        reason: expect.stringContaining('https://example.com/s.json'),
      });
      expect(error.message).toContain("Tool 'mailer'");
      expect(error.message).toMatch(/only local references/);
    });

    it('[sec-35] refuses an unknown keyword with 422 naming the tool, the location and the keyword; nothing stored', async () => {
      const inputSchema = { type: 'object', properties: { word: { type: 'string', maxLenght: 3 } } };
      const error = await expectRefusedAndNotStored(skillOf([schemaTool('typo', inputSchema)]), 422, 'schema_refused');
      expect(error.details).toEqual({
        tool: 'typo',
        schema: 'inputSchema',
        location: '/properties/word/maxLenght',
        reason: expect.stringContaining('unknown keyword: "maxLenght"'),
      });
      expect(error.message).toContain("Tool 'typo'");
    });

    it('[sec-35] vets the schema of a parameter that happens to be called "properties" like any other', async () => {
      const remote = { type: 'object', properties: { properties: { $ref: 'https://example.com/s.json' } } };
      const refusedRef = await expectRefusedAndNotStored(skillOf([schemaTool('named_properties', remote)]), 422, 'schema_refused');
      expect(refusedRef.details).toMatchObject({ tool: 'named_properties', location: '/properties/properties/$ref' });

      const longPattern = { type: 'object', properties: { definitions: { type: 'string', pattern: 'a'.repeat(5000) } } };
      const refusedPattern = await expectRefusedAndNotStored(skillOf([schemaTool('named_definitions', longPattern)]), 422, 'schema_refused');
      expect(refusedPattern.details).toMatchObject({
        tool: 'named_definitions',
        location: '/properties/definitions/pattern',
        reason: expect.stringMatching(/longer than \d+ characters/),
      });
    });

    it('[sec-35] vets the output schema too', async () => {
      const tool = { ...printTool('with_output'), outputSchema: { type: 'object', properties: { r: { $ref: 'https://example.com/s.json' } } } };
      const error = await expectRefusedAndNotStored(skillOf([tool]), 422, 'schema_refused');
      expect(error.details).toMatchObject({ tool: 'with_output', schema: 'outputSchema', location: '/properties/r/$ref' });
    });

    it('refuses an input schema that does not describe an object of arguments', async () => {
      const error = await expectRefusedAndNotStored(skillOf([schemaTool('scalar', { type: 'string' })]), 422, 'schema_refused');
      expect(error.details).toMatchObject({ tool: 'scalar', schema: 'inputSchema', location: '/type' });
    });
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
        expect({ path, method, status, documented: operation!.responses[status] !== undefined }).toEqual({ path, method, status, documented: true });
      }
    }
    // The registration body is published as the schema the service validates with.
    const body = JSON.stringify(doc.paths['/v1/skills']!.post!.requestBody);
    for (const field of ['inputSchema', 'executor', 'argv', 'timeoutMs', 'mode']) expect(body).toContain(field);
    const put = JSON.stringify(doc.paths['/v1/skills/{skillId}']!.put!.responses['409']);
    expect(put).toMatch(/skill_version_exists/);
    expect(put).toMatch(/tool_name_collision/);
  });
});
