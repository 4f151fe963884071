import { createToolAjv } from './ajv-factory.js';

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  ...extra,
});

describe('createToolAjv', () => {
  it('refuses unknown keywords (strict mode)', () => {
    expect(() => createToolAjv().compile(object({ a: { type: 'string', maxLenght: 3 } }))).toThrow(/unknown keyword/);
  });

  it('refuses $data references', () => {
    const schema = object({ a: { type: 'string', maxLength: { $data: '1/b' } }, b: { type: 'integer' } });
    expect(() => createToolAjv().compile(schema)).toThrow();
  });

  it('never fetches a remote $ref: the schema fails to compile', () => {
    const schema = object({ a: { $ref: 'https://schemas.example/evil.json' } });
    expect(() => createToolAjv().compile(schema)).toThrow(/can't resolve reference/);
  });

  it('allows union types', () => {
    const validate = createToolAjv().compile(object({ a: { type: ['string', 'null'] } }));
    expect(validate({ a: null })).toBe(true);
  });

  it('checks formats from ajv-formats', () => {
    const validate = createToolAjv().compile(object({ email: { type: 'string', format: 'email' } }));
    expect(validate({ email: 'a@example.com' })).toBe(true);
    expect(validate({ email: 'not an email' })).toBe(false);
  });

  it('neither coerces types nor applies defaults', () => {
    const validate = createToolAjv().compile(object({ n: { type: 'integer' }, d: { type: 'integer', default: 3 } }));
    const args: Record<string, unknown> = { n: '5' };
    expect(validate(args)).toBe(false);
    expect(args).toEqual({ n: '5' });
  });

  it('does not let Object.prototype satisfy a required property', () => {
    const validate = createToolAjv().compile(object({ toString: { type: 'string' } }, { required: ['toString'] }));
    expect(validate({})).toBe(false);
  });

  it("keeps one instance's $id invisible to another instance (one instance per tenant)", () => {
    const tenantA = createToolAjv();
    const tenantB = createToolAjv();
    tenantA.compile({ $id: 'https://schemas.example/shared', type: 'object' });
    expect(() => tenantB.compile(object({ a: { $ref: 'https://schemas.example/shared' } }))).toThrow(
      /can't resolve reference/,
    );
  });

  it("does not let one tool schema $ref another's $id in the same instance", () => {
    const ajv = createToolAjv();
    ajv.compile({ $id: 'https://schemas.example/first', type: 'object' });
    expect(() => ajv.compile(object({ a: { $ref: 'https://schemas.example/first' } }))).toThrow(
      /can't resolve reference/,
    );
  });

  it('uses the regular expression engine it is given for patterns', () => {
    const engine = Object.assign((source: string, flags: string) => new RegExp(source, flags), { code: 'new RegExp' });
    const calls: string[] = [];
    const spying = Object.assign((source: string, flags: string) => (calls.push(source), engine(source, flags)), {
      code: 'new RegExp',
    });
    const validate = createToolAjv({ regExp: spying }).compile(object({ a: { type: 'string', pattern: '^a+$' } }));
    expect(validate({ a: 'aaa' })).toBe(true);
    expect(calls).toContain('^a+$');
  });
});
