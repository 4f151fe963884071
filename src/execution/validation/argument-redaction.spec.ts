import { compileRedactionPlan, isSensitiveKey, redactArguments, redactRawArguments, scrubSecrets } from './argument-redaction.js';

describe('argument redaction', () => {
  it('recognises credential header names in any case and spelling, and leaves ordinary names alone', () => {
    for (const key of ['Authorization', 'PROXY-AUTHORIZATION', 'cookie', 'Set-Cookie', 'X-Api-Key', 'api_key', 'x-auth-token', 'clientSecret', 'db_password', 'refresh_token']) {
      expect({ key, sensitive: isSensitiveKey(key) }).toEqual({ key, sensitive: true });
    }
    for (const key of ['path', 'content', 'url', 'headers', 'key', 'author', 'keyboard', 'method']) {
      expect({ key, sensitive: isSensitiveKey(key) }).toEqual({ key, sensitive: false });
    }
  });

  it('replaces sensitive values at any depth, lists their JSON Pointers and never changes the input', () => {
    const args = { url: 'https://x.test', headers: { Authorization: 'Bearer sk-live-1', accept: 'json' }, deep: [{ 'a/b': { Cookie: 'sid=1' } }] };
    const before = structuredClone(args);
    const out = redactArguments(args, null);
    expect(out.value).toEqual({ url: 'https://x.test', headers: { Authorization: '[redacted]', accept: 'json' }, deep: [{ 'a/b': { Cookie: '[redacted]' } }] });
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
    const out = redactArguments({ login: 'ann', pin: '1234', list: [{ code: 'c1' }, { code: 'c2' }], map: { a: 'x', b: 'y' }, either: { otp: '999999' } }, plan);
    expect(out.value).toEqual({
      login: 'ann',
      pin: '[redacted]',
      list: [{ code: '[redacted]' }, { code: '[redacted]' }],
      map: { a: '[redacted]', b: '[redacted]' },
      either: { otp: '[redacted]' },
    });
    expect(out.paths).toEqual(['/pin', '/list/0/code', '/list/1/code', '/map/a', '/map/b', '/either/otp']);
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

  it('scrubs messages that quote a redacted value whole, cut short or JSON-escaped', () => {
    const secret = 'sk-live-0123456789abcdef0123456789abcdef0123456789';
    expect(scrubSecrets(`got '${secret.slice(0, 39)}…'`, [secret])).toBe("got '[redacted]…'");
    expect(scrubSecrets(`value ${secret} twice ${secret}`, [secret])).toBe('value [redacted] twice [redacted]');
    expect(scrubSecrets('say "a\\"b-quoted-secret"', ['a"b-quoted-secret'])).toBe('say "[redacted]"');
    expect(scrubSecrets('an ordinary message', ['abc'])).toBe('an ordinary message');
  });
});
