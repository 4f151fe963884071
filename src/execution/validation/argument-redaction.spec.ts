import { compileRedactionPlan, redactArguments, redactRawArguments } from './argument-redaction.js';

describe('argument redaction', () => {
  it('replaces sensitive values at any depth, lists their JSON Pointers and never changes the input', () => {
    const args = {
      url: 'https://x.test',
      headers: { Authorization: 'Bearer sk-live-1', accept: 'json' },
      deep: [{ 'a/b': { Cookie: 'sid=1' } }],
    };
    const before = structuredClone(args);
    const out = redactArguments(args, null);
    expect(out.value).toEqual({
      url: 'https://x.test',
      headers: { Authorization: '[redacted]', accept: 'json' },
      deep: [{ 'a/b': { Cookie: '[redacted]' } }],
    });
    expect(out.paths).toEqual(['/headers/Authorization', '/deep/0/a~1b/Cookie']);
    expect(out.secrets).toEqual(['Bearer sk-live-1', 'sid=1']);
    expect(args).toEqual(before);
  });

  it('hands back the very same object when nothing is sensitive (no copy on the hot path)', () => {
    const args = { path: 'a.txt', offset: 3 };
    const out = redactArguments(args, null);
    expect(out.value).toBe(args);
    expect(out.paths).toEqual([]);
  });

  it('follows writeOnly through properties, items, additionalProperties, combinators and local $refs', () => {
    const schema = {
      type: 'object',
      definitions: { cred: { type: 'string', writeOnly: true } },
      properties: {
        login: { type: 'string' },
        pin: { type: 'string', writeOnly: true },
        list: { type: 'array', items: { type: 'object', properties: { code: { $ref: '#/definitions/cred' } } } },
        map: { type: 'object', additionalProperties: { type: 'string', writeOnly: true } },
        either: { anyOf: [{ type: 'object', properties: { otp: { type: 'string', writeOnly: true } } }, { type: 'string' }] },
      },
    };
    const plan = compileRedactionPlan(schema);
    const out = redactArguments(
      { login: 'ann', pin: '1234', list: [{ code: 'c1' }, { code: 'c2' }], map: { a: 'x', b: 'y' }, either: { otp: '999999' } },
      plan,
    );
    expect(out.value).toEqual({
      login: 'ann',
      pin: '[redacted]',
      list: [{ code: '[redacted]' }, { code: '[redacted]' }],
      map: { a: '[redacted]', b: '[redacted]' },
      either: { otp: '[redacted]' },
    });
    expect(out.paths).toEqual(['/pin', '/list/0/code', '/list/1/code', '/map/a', '/map/b', '/either/otp']);
  });

  it('follows writeOnly through prefixItems, contains, dependencies and dependentSchemas', () => {
    const secret = { type: 'string', writeOnly: true };
    const schema = {
      type: 'object',
      properties: {
        pair: { type: 'array', prefixItems: [secret, { type: 'string' }] },
        bag: { type: 'array', contains: secret },
        legacy: { type: 'array', items: [{ type: 'string' }, secret] },
      },
      dependencies: { d: { properties: { dd: secret } } },
      dependentSchemas: { e: { properties: { ee: secret } } },
    };
    const out = redactArguments(
      { pair: ['S1', 'open'], bag: ['C1'], legacy: ['open', 'L1'], d: 1, dd: 'D1', e: 1, ee: 'E1' },
      compileRedactionPlan(schema),
    );
    expect(out.value).toEqual({
      pair: ['[redacted]', 'open'],
      bag: ['[redacted]'],
      legacy: ['open', '[redacted]'],
      d: 1,
      dd: '[redacted]',
      e: 1,
      ee: '[redacted]',
    });
  });

  it('redacts every argument when a writeOnly value sits where the plan cannot follow ($dynamicRef, $ref beside keywords, not)', () => {
    const cases = [
      {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $dynamicAnchor: 'node',
        type: 'object',
        properties: { c: { $dynamicRef: '#node' }, s: { type: 'string', writeOnly: true }, t: { $dynamicRef: '#inner' } },
        $defs: { inner: { $dynamicAnchor: 'inner', type: 'string', writeOnly: true } },
      },
      {
        type: 'object',
        definitions: { base: { type: 'object' } },
        properties: { c: { $ref: '#/definitions/base', properties: { s: { type: 'string', writeOnly: true } } } },
      },
    ];
    for (const schema of cases) {
      const out = redactArguments({ c: { s: 'hunter2', c: { s: 'deep' } }, s: 'x', t: 'y' }, compileRedactionPlan(schema));
      expect(JSON.stringify(out.value)).not.toMatch(/hunter2|deep/);
    }
  });

  it('compiles no plan for a schema without writeOnly', () => {
    expect(compileRedactionPlan({ type: 'object', properties: { path: { type: 'string' } } })).toBeNull();
  });

  it('survives a recursive schema', () => {
    const schema = { type: 'object', properties: { child: { $ref: '#' }, secretish: { type: 'string', writeOnly: true } } };
    const out = redactArguments({ child: { child: { secretish: 's3cr3t-value' } } }, compileRedactionPlan(schema));
    expect(out.paths).toEqual(['/child/child/secretish']);
  });

  it('keeps JSON-text arguments as text, redacted; blanks pairs in text that does not parse', () => {
    const parsed = redactRawArguments('{"headers":{"X-Api-Key":"k-123456"}}', null);
    expect(parsed.value).toBe('{"headers":{"X-Api-Key":"[redacted]"}}');
    const broken = redactRawArguments('{"headers":{"X-Api-Key":"k-123456", oops', null);
    expect(broken.value).toBe('{"headers":{"X-Api-Key":"[redacted]", oops');
    expect(broken.paths).toEqual(['/X-Api-Key']);
  });

  it('redacts credentials inside strings by value and by name, keeping the rest of the text', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbm4ifQ.c2lnbmF0dXJl';
    const args = {
      url: 'https://api.example.test/v1/items?api_key=k-0123456789&q=shoes',
      body: '{"user":"ann","password":"hunter2-hunter2"}',
      note: `keep this, drop ${jwt}`,
      path: 'src/auth/session-token.ts',
    };
    const out = redactArguments(args, null);
    expect(out.value).toEqual({
      url: 'https://api.example.test/v1/items?api_key=[redacted]&q=shoes',
      body: '{"user":"ann","password":"[redacted]"}',
      note: 'keep this, drop [redacted]',
      path: 'src/auth/session-token.ts',
    });
    expect(out.paths).toEqual(['/url', '/body', '/note']);
    expect(out.secrets).toEqual(['k-0123456789', 'hunter2-hunter2', jwt]);
  });
});
