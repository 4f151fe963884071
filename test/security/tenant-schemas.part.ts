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

// Tenant schemas are untrusted input, vetted at registration (cases 33-35 of docs/security-model.md).

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

  describe('JSON Schema 2020-12 tool schemas', () => {
    let projectId: string;

    beforeAll(async () => {
      projectId = (await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['printf'] })).id;
    });

    it('checks arguments with 2020-12 meaning ($defs, prefixItems, items: false), answering 422 that names the parameter', async () => {
      const inputSchema = {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: { label: { type: 'string' } },
        properties: {
          word: { type: 'string', minLength: 1 },
          pair: { type: 'array', prefixItems: [{ $ref: '#/$defs/label' }, { type: 'integer' }], minItems: 2, items: false },
        },
        required: ['word'],
        additionalProperties: false,
      };
      await installSkill(t, tenant, projectId, skillOf([printTool('modern_print', inputSchema)]));

      const ok = await callTool(t, tenant, projectId, 'modern_print', { word: 'hi', pair: ['a', 1] }).expect(200);
      expect(ok.body).toMatchObject({ status: 'ok', result: { stdout: 'hi' } });
      const third = expectError(
        await callTool(t, tenant, projectId, 'modern_print', { word: 'hi', pair: ['a', 1, 2] }),
        422,
        'invalid_arguments',
      );
      expect(third.message).toMatch(/pair/);
      expect(third.message).toMatch(/at most 2 items/);
      const typed = expectError(
        await callTool(t, tenant, projectId, 'modern_print', { word: 'hi', pair: [1, 1] }),
        422,
        'invalid_arguments',
      );
      expect(typed.message).toMatch(/pair\/0|pair\[0\]/);
      expect(typed.message).toMatch(/string/);
      const empty = expectError(await callTool(t, tenant, projectId, 'modern_print', { word: '' }), 422, 'invalid_arguments');
      expect(empty.message).toMatch(/word/);
      expect(empty.message).toMatch(/Usage: modern_print\(word: string/);
    });

    it('keeps draft-07 meaning for a schema without $schema: items as a list is a tuple', async () => {
      const inputSchema = {
        type: 'object',
        properties: {
          word: { type: 'string' },
          pair: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }], minItems: 2, additionalItems: false },
        },
        required: ['word'],
      };
      await installSkill(t, tenant, projectId, skillOf([printTool('classic_print', inputSchema)]));
      await callTool(t, tenant, projectId, 'classic_print', { word: 'hi', pair: ['a', 1] }).expect(200);
      expectError(await callTool(t, tenant, projectId, 'classic_print', { word: 'hi', pair: ['a', 1, 2] }), 422, 'invalid_arguments');
    });

    it('reads a schema without $schema that uses a keyword only 2020-12 has (prefixItems) as 2020-12', async () => {
      const inputSchema = {
        type: 'object',
        properties: { word: { type: 'string' }, pair: { type: 'array', prefixItems: [{ type: 'string' }], minItems: 1, maxItems: 1 } },
        required: ['word'],
      };
      await installSkill(t, tenant, projectId, skillOf([printTool('implied_print', inputSchema)]));
      await callTool(t, tenant, projectId, 'implied_print', { word: 'hi', pair: ['a'] }).expect(200);
      const error = expectError(await callTool(t, tenant, projectId, 'implied_print', { word: 'hi', pair: [1] }), 422, 'invalid_arguments');
      expect(error.message).toMatch(/string/);
    });

    it("[sec-33] runs a 2020-12 schema's patterns on the linear-time engine too", async () => {
      const inputSchema = { $schema: 'https://json-schema.org/draft/2020-12/schema', ...STRING_ARG('word', { pattern: '^(a+)+$' }) };
      await installSkill(t, tenant, projectId, skillOf([printTool('modern_match', inputSchema)]));
      const error = expectError(
        await callTool(t, tenant, projectId, 'modern_match', { word: `${'a'.repeat(50)}!` }),
        422,
        'invalid_arguments',
      );
      expect(error.message).toContain('^(a+)+$');
    });
  });

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

    it('[sec-33] refuses a value too long to match against its pattern in bounded time, naming why; shorter ones are matched', async () => {
      // A thousand-instruction program: matching a megabyte would hold the service for seconds.
      const tool = printTool('match_long', {
        ...STRING_ARG('word', { pattern: '[abc]*a[abc]{999}c$' }),
        properties: { word: { type: 'string', pattern: '[abc]*a[abc]{999}c$' } },
      });
      await installSkill(t, tenant, projectId, skillOf([tool]));
      const long = `${'abc'.repeat(300_000)}a`;
      const started = Date.now();
      const error = expectError(await callTool(t, tenant, projectId, 'match_long', { word: long }), 422, 'invalid_arguments');
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(error.message).toMatch(
        /a value of 900001 characters is too long to check against the pattern "\[abc\]\*a\[abc\]\{999\}c\$" \(at most \d+ characters for it\); send a shorter value/,
      );
      const near = `a${'b'.repeat(999)}c`;
      await callTool(t, tenant, projectId, 'match_long', { word: near }).expect(200);
      expectError(await callTool(t, tenant, projectId, 'match_long', { word: `${near}a` }), 422, 'invalid_arguments');
    });

    it('[sec-33] checks uniqueItems over 64,000 arrays in linear time, naming the two equal items', async () => {
      // AJV compares every pair of items that are not declared scalars: 64,000 distinct two-item arrays (565 KB)
      // held the event loop for 20 s. The same list is checked under two schemas, with and without uniqueItems.
      const list = (extra: Record<string, unknown>) => ({
        type: 'object',
        properties: { word: { type: 'string' }, pairs: { type: 'array', items: { type: 'array' }, ...extra } },
        required: ['word'],
      });
      await installSkill(t, tenant, projectId, skillOf([printTool('unique_pairs', list({ uniqueItems: true }))]));
      await installSkill(t, tenant, projectId, skillOf([printTool('listed_pairs', list({ maxItems: 100_000 }))]));
      const pairs = Array.from({ length: 64_000 }, (_, i) => [i % 1000, Math.floor(i / 1000)]);

      const timed = async (tool: string) => {
        const started = performance.now();
        const res = await callTool(t, tenant, projectId, tool, { word: 'x', pairs }).expect(200);
        expect(res.body).toMatchObject({ status: 'ok', result: { stdout: 'x' } });
        return performance.now() - started;
      };
      const listed = await timed('listed_pairs');
      const unique = await timed('unique_pairs');
      process.stderr.write(
        `[sec-33] 64,000 distinct pairs: called with uniqueItems in ${Math.round(unique)} ms, without in ${Math.round(listed)} ms\n`,
      );
      // Same order of work: the pairwise check took 20 s against a fraction of a second.
      expect(unique / listed).toBeLessThan(5);
      // A last pair equal to the first is found and named.
      const twice = expectError(
        await callTool(t, tenant, projectId, 'unique_pairs', { word: 'x', pairs: [...pairs, [0, 0]] }),
        422,
        'invalid_arguments',
      );
      expect(twice.message).toMatch(/pairs must not contain duplicates \(items 0 and 64000 are identical\)/);
      // Objects are equal whatever the order of their keys; arrays and types are not loosened.
      await installSkill(
        t,
        tenant,
        projectId,
        skillOf([
          printTool('unique_things', {
            ...list({ uniqueItems: true }),
            properties: { word: { type: 'string' }, things: { type: 'array', uniqueItems: true } },
          }),
        ]),
      );
      const same = expectError(
        await callTool(t, tenant, projectId, 'unique_things', { word: 'x', things: [{ a: 1, b: [2] }, 'b', { b: [2], a: 1 }] }),
        422,
        'invalid_arguments',
      );
      expect(same.message).toMatch(/items 0 and 2 are identical/);
      await callTool(t, tenant, projectId, 'unique_things', {
        word: 'x',
        things: [[1, 2], [2, 1], 1, '1', true, null, { a: 1 }, { a: '1' }],
      }).expect(200);
    });

    it('[sec-33] refuses at registration a pattern with a backreference or a lookahead, naming where it is', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [STRING_ARG('word', { pattern: '^(a)\\1$' }), '/properties/word/pattern'],
        [STRING_ARG('word', { pattern: '^(?=a)a+$' }), '/properties/word/pattern'],
        [{ type: 'object', patternProperties: { '^(x)\\1$': { type: 'string' } } }, '/patternProperties/^(x)\\1$'],
      ];
      for (const [inputSchema, location] of cases) {
        const error = await expectRefusedAndNotStored(skillOf([schemaTool('backtracking', inputSchema)]), 422, 'schema_refused');
        expect(error.details).toEqual({
          tool: 'backtracking',
          schema: 'inputSchema',
          location,
          reason: expect.stringMatching(/backreference|lookaround/),
        });
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
    const huge = skillOf([commandTool('huge_tool', ['printf', 'x'], { type: 'object', description: 'x'.repeat(5 * 1024 * 1024) })]);
    const body = JSON.stringify(huge);
    expect(body.length).toBeGreaterThan(t.config.bodyLimitBytes);
    const error413 = await expectRefusedAndNotStored(body, 413, 'payload_too_large');
    expect(error413.message).toMatch(/larger than the limit/);

    const large = skillOf([commandTool('large_tool', ['printf', 'x'], { type: 'object', description: 'x'.repeat(100 * 1024) })]);
    expect(JSON.stringify(large).length).toBeLessThan(t.config.bodyLimitBytes);
    const error = await expectRefusedAndNotStored(large, 422, 'schema_refused');
    expect(error.details).toEqual({
      tool: 'large_tool',
      schema: 'inputSchema',
      location: '/',
      reason: expect.stringMatching(/bytes; the limit is \d+/),
    });
  });

  describe('[sec-35] schema features that reach outside the schema', () => {
    it('[sec-35] refuses $data with 422 naming the tool, the location and the reason; nothing stored', async () => {
      const inputSchema = {
        type: 'object',
        properties: { low: { type: 'number' }, high: { type: 'number', minimum: { $data: '1/low' } } },
      };
      const error = await expectRefusedAndNotStored(skillOf([schemaTool('ranged', inputSchema)]), 422, 'schema_refused');
      expect(error.details).toEqual({
        tool: 'ranged',
        schema: 'inputSchema',
        location: '/properties/high/minimum/$data',
        reason: '$data references are not allowed',
      });
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
      const refusedPattern = await expectRefusedAndNotStored(
        skillOf([schemaTool('named_definitions', longPattern)]),
        422,
        'schema_refused',
      );
      expect(refusedPattern.details).toMatchObject({
        tool: 'named_definitions',
        location: '/properties/definitions/pattern',
        reason: expect.stringMatching(/longer than \d+ characters/),
      });
    });

    it('[sec-35] vets the output schema too', async () => {
      const tool = {
        ...printTool('with_output'),
        outputSchema: { type: 'object', properties: { r: { $ref: 'https://example.com/s.json' } } },
      };
      const error = await expectRefusedAndNotStored(skillOf([tool]), 422, 'schema_refused');
      expect(error.details).toMatchObject({ tool: 'with_output', schema: 'outputSchema', location: '/properties/r/$ref' });
    });

    it('[sec-35] vets a JSON Schema 2020-12 schema as strictly: remote $ref and $dynamicRef, $data, unknown keywords, backtracking patterns', async () => {
      const dialect = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' };
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...dialect, properties: { a: { $ref: 'https://example.com/s.json' } } }, '/properties/a/$ref'],
        [{ ...dialect, properties: { a: { $dynamicRef: 'https://example.com/s.json#meta' } } }, '/properties/a/$dynamicRef'],
        [{ ...dialect, properties: { a: { type: 'number', minimum: { $data: '1/b' } } } }, '/properties/a/minimum/$data'],
        [{ ...dialect, properties: { a: { type: 'string', maxLenght: 3 } } }, '/properties/a/maxLenght'],
        [{ ...dialect, properties: { a: { type: 'string', pattern: '^(a)\\1$' } } }, '/properties/a/pattern'],
        [
          { ...dialect, dependentSchemas: { a: { properties: { b: { $ref: 'https://example.com/s.json' } } } } },
          '/dependentSchemas/a/properties/b/$ref',
        ],
      ];
      for (const [inputSchema, location] of cases) {
        const error = await expectRefusedAndNotStored(skillOf([schemaTool('modern', inputSchema)]), 422, 'schema_refused');
        expect(error.details).toMatchObject({ tool: 'modern', schema: 'inputSchema', location });
      }
    });

    it('[sec-34] refuses a small schema whose $refs apply exponentially many subschemas to one value, or cycle on one value', async () => {
      const doubling = (n: number, keyword: string) => {
        const defs: Record<string, unknown> = { d0: { type: 'object', required: ['z'] } };
        for (let i = 1; i <= n; i++) defs[`d${i}`] = { allOf: [{ $ref: `#/${keyword}/d${i - 1}` }, { $ref: `#/${keyword}/d${i - 1}` }] };
        return { type: 'object', [keyword]: defs, allOf: [{ $ref: `#/${keyword}/d${n}` }] };
      };
      for (const inputSchema of [
        doubling(29, 'definitions'),
        { $schema: 'https://json-schema.org/draft/2020-12/schema', ...doubling(40, '$defs') },
      ]) {
        expect(JSON.stringify(inputSchema).length).toBeLessThan(4_000);
        const error = await expectRefusedAndNotStored(skillOf([schemaTool('doubling', inputSchema)]), 422, 'schema_refused');
        expect(error.details).toMatchObject({
          tool: 'doubling',
          location: '/',
          reason: expect.stringMatching(/more than 10000 subschemas/),
        });
      }
      const cycle = { type: 'object', definitions: { a: { anyOf: [{ $ref: '#/definitions/a' }] } }, allOf: [{ $ref: '#/definitions/a' }] };
      const error = await expectRefusedAndNotStored(skillOf([schemaTool('cycle', cycle)]), 422, 'schema_refused');
      expect(error.details).toMatchObject({ tool: 'cycle', reason: expect.stringMatching(/same value/) });
    });

    it('[sec-35] refuses a $schema other than draft-07 or 2020-12, naming both', async () => {
      for (const $schema of [
        'https://json-schema.org/draft/2019-09/schema',
        'http://json-schema.org/draft-04/schema#',
        'https://evil.example/schema',
      ]) {
        const error = await expectRefusedAndNotStored(skillOf([schemaTool('dialect', { $schema, type: 'object' })]), 422, 'schema_refused');
        expect(error.details).toMatchObject({
          tool: 'dialect',
          location: '/$schema',
          reason: expect.stringMatching(/draft-07 and 2020-12/),
        });
      }
    });

    it('refuses an input schema that does not describe an object of arguments', async () => {
      const error = await expectRefusedAndNotStored(skillOf([schemaTool('scalar', { type: 'string' })]), 422, 'schema_refused');
      expect(error.details).toMatchObject({ tool: 'scalar', schema: 'inputSchema', location: '/type' });
    });
  });
});
