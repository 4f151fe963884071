import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import {
  callTool,
  commandTool,
  expectError,
  installSkill,
  listSkills,
  skillOf,
  STRING_ARG,
  type SkillBody,
  uniqueName,
} from '../e2e/skills/skill-test-kit.js';

// Prints its `word` argument.
const printTool = (name = 'print_word', inputSchema: Record<string, unknown> = STRING_ARG('word')) =>
  commandTool(name, ['printf', '%s', '{{word}}'], inputSchema);
// For schemas that must be refused before the argv template is looked at.
const schemaTool = (name: string, inputSchema: Record<string, unknown>) => commandTool(name, ['printf', 'ok'], inputSchema);

// Tenant schemas are untrusted input, vetted at registration (lines 33-35 of the hostile-input list).

// A schema nested `levels` deep through `not`, written as text so building it needs no recursion.
function deepSchemaJson(levels: number): string {
  return `{"type":"object","properties":{"deep":${'{"not":'.repeat(levels)}{"type":"string"}${'}'.repeat(levels)}}}`;
}

describe('tenant schemas at registration', () => {
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

  describe('[sec-33] patterns in tenant schemas', () => {
    let projectId: string;

    beforeAll(async () => {
      projectId = (await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['printf'] })).id;
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

});
