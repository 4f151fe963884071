import { createToolAjv, JSON_SCHEMA_2020_12, JSON_SCHEMA_DRAFT_07, schemaDialect } from './ajv-factory.js';

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
    expect(() => tenantB.compile(object({ a: { $ref: 'https://schemas.example/shared' } }))).toThrow(/can't resolve reference/);
  });

  it("does not let one tool schema $ref another's $id in the same instance", () => {
    const ajv = createToolAjv();
    ajv.compile({ $id: 'https://schemas.example/first', type: 'object' });
    expect(() => ajv.compile(object({ a: { $ref: 'https://schemas.example/first' } }))).toThrow(/can't resolve reference/);
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

  describe('dialects', () => {
    const pair = { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], minItems: 2, items: false };

    it('validates a schema declaring 2020-12 with 2020-12 meaning', () => {
      const validate = createToolAjv().compile(
        object({ pair, home: { $ref: '#/$defs/place' } }, { $schema: JSON_SCHEMA_2020_12, $defs: { place: { type: 'string' } } }),
      );
      expect(validate({ pair: ['a', 1], home: 'x' })).toBe(true);
      expect(validate({ pair: ['a', 1, 2] })).toBe(false);
      expect(validate({ pair: [1, 1] })).toBe(false);
      expect(validate({ home: 3 })).toBe(false);
    });

    it('reads a schema without $schema as draft-07, where items as a list is a tuple', () => {
      const tuple = { type: 'array', items: [{ type: 'string' }], minItems: 1, additionalItems: false };
      expect(schemaDialect(object({ tuple }))).toBe('draft-07');
      const validate = createToolAjv().compile(object({ tuple }));
      expect(validate({ tuple: ['a'] })).toBe(true);
      expect(validate({ tuple: ['a', 'b'] })).toBe(false);
    });

    it('reads a schema without $schema as 2020-12 when it uses a keyword only 2020-12 has, however deep', () => {
      expect(schemaDialect(object({ outer: object({ pair }) }))).toBe('2020-12');
      expect(schemaDialect(object({ a: { type: 'string' } }, { unevaluatedProperties: false }))).toBe('2020-12');
      expect(createToolAjv().compile(object({ outer: object({ pair }) }))({ outer: { pair: ['a', 'b'] } })).toBe(false);
    });

    it('follows a declared draft-07 $schema even when a 2020-12 keyword appears (strict mode then refuses it)', () => {
      expect(schemaDialect(object({ pair }, { $schema: JSON_SCHEMA_DRAFT_07 }))).toBe('draft-07');
      expect(() => createToolAjv().compile(object({ pair }, { $schema: JSON_SCHEMA_DRAFT_07 }))).toThrow(/unknown keyword: "prefixItems"/);
    });

    it('never fetches a remote $ref or $dynamicRef in 2020-12 either', () => {
      expect(() =>
        createToolAjv().compile(object({ a: { $ref: 'https://schemas.example/evil.json' } }, { $schema: JSON_SCHEMA_2020_12 })),
      ).toThrow(/can't resolve reference/);
      expect(() =>
        createToolAjv().compile(object({ a: { $dynamicRef: 'https://schemas.example/evil.json#x' } }, { $schema: JSON_SCHEMA_2020_12 })),
      ).toThrow();
    });

    it('removes a compiled 2020-12 schema from its own instance', () => {
      const ajv = createToolAjv();
      const schema = object({ pair }, { $schema: JSON_SCHEMA_2020_12, $id: 'https://toolgate.test/pair' });
      ajv.compile(schema);
      ajv.removeSchema(schema);
      expect(() => ajv.compile(schema)).not.toThrow();
    });
  });
});
