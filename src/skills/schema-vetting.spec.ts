import { JSON_SCHEMA_2020_12, schemaDialect } from '../execution/validation/ajv-factory.js';
import { createTenantAjv, SchemaRefusal, vetSchema } from './schema-vetting.js';

// Every keyword of JSON Schema 2020-12 (its core, applicator, unevaluated, validation, meta-data, format and
// content vocabularies), each where it applies, as an MCP server of revision 2026-07-28 may write them.
const EVERY_2020_12_KEYWORD = {
  $id: 'https://tools.example/order',
  $comment: 'an order, with every keyword of the dialect',
  $vocabulary: { 'https://json-schema.org/draft/2020-12/vocab/core': true },
  type: 'object',
  title: 'Order',
  description: 'An order',
  $defs: {
    sku: { $anchor: 'sku', type: 'string', pattern: '^[A-Z]{3}-\\d+$' },
    node: { $dynamicAnchor: 'node', type: 'object', properties: { children: { type: 'array', items: { $dynamicRef: '#node' } } } },
  },
  properties: {
    sku: { $ref: '#sku' },
    tree: { $ref: '#/$defs/node' },
    pair: {
      type: 'array',
      prefixItems: [{ type: 'string' }, { type: 'integer', minimum: 0, exclusiveMaximum: 100, multipleOf: 1 }],
      items: false,
    },
    rest: { type: 'array', prefixItems: [{ type: 'string' }], unevaluatedItems: false },
    tags: { type: 'array', contains: { const: 'urgent' }, minContains: 1, maxContains: 2, maxItems: 10, minItems: 1, uniqueItems: true },
    note: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      default: '',
      examples: ['fragile'],
      deprecated: true,
      readOnly: false,
      writeOnly: false,
    },
    payload: { type: 'string', contentEncoding: 'base64', contentMediaType: 'application/json', contentSchema: { type: 'object' } },
    when: { type: 'string', format: 'date-time' },
    card: { type: 'string' },
    cvc: { type: 'string' },
    kind: { enum: ['a', 'b'] },
    extras: {
      type: 'object',
      propertyNames: { maxLength: 20 },
      patternProperties: { '^x-': { type: 'string' } },
      additionalProperties: false,
      minProperties: 0,
      maxProperties: 5,
    },
    either: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    one: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
    all: { type: 'number', allOf: [{ maximum: 10 }, { exclusiveMinimum: -1 }] },
    none: { not: { type: 'boolean' } },
    shape: { type: ['string', 'integer'], if: { type: 'string' }, then: { minLength: 2 }, else: { minimum: 0 } },
  },
  required: ['sku'],
  dependentRequired: { card: ['cvc'] },
  dependentSchemas: { cvc: { required: ['card'] } },
  unevaluatedProperties: false,
};

const validatorOf = (schema: object) => {
  const ajv = createTenantAjv();
  return ajv.compile(vetSchema(schema, ajv, 'input'));
};

describe('vetSchema: JSON Schema 2020-12', () => {
  it('accepts every 2020-12 keyword, with or without $schema, and reads a schema without it as 2020-12', () => {
    expect(schemaDialect(EVERY_2020_12_KEYWORD)).toBe('2020-12');
    expect(() => validatorOf(EVERY_2020_12_KEYWORD)).not.toThrow();
    expect(() => validatorOf({ $schema: JSON_SCHEMA_2020_12, ...EVERY_2020_12_KEYWORD })).not.toThrow();
  });

  it.each([
    ['$anchor', { type: 'object', $defs: { id: { $anchor: 'id', type: 'string' } }, properties: { id: { $ref: '#id' } } }],
    ['$dynamicAnchor and $dynamicRef', { type: 'object', $dynamicAnchor: 'self', properties: { next: { $dynamicRef: '#self' } } }],
    ['dependentRequired', { type: 'object', properties: { a: { type: 'string' } }, dependentRequired: { a: ['b'] } }],
    [
      'a tuple without minItems',
      { type: 'object', properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'string' }] } } },
    ],
  ])('accepts %s alone, in a schema without $schema', (_keyword, schema) => {
    expect(() => validatorOf(schema)).not.toThrow();
  });

  it('validates with the keywords: anchors, dynamic references, dependencies, unevaluated and contained items', () => {
    const validate = validatorOf(EVERY_2020_12_KEYWORD);
    const order = {
      sku: 'ABC-1',
      pair: ['a', 3],
      rest: ['x'],
      tags: ['urgent'],
      card: '4242',
      cvc: '123',
      tree: { children: [{ children: [] }] },
    };
    expect(validate(order)).toBe(true);
    expect(validate({ ...order, sku: 'abc' })).toBe(false);
    expect(validate({ ...order, cvc: undefined })).toBe(false);
    expect(validate({ ...order, surprise: 1 })).toBe(false);
    expect(validate({ ...order, rest: ['x', 'y'] })).toBe(false);
    expect(validate({ ...order, tags: ['urgent', 'urgent', 'urgent'] })).toBe(false);
    expect(validate({ ...order, tree: { children: [3] } })).toBe(false);
  });

  it('keeps its protections in 2020-12: no $data, no reference out of the schema, no pattern the linear engine cannot run', () => {
    const refusal = (schema: object) => {
      try {
        validatorOf(schema);
      } catch (error) {
        if (error instanceof SchemaRefusal) return error.message;
        throw error;
      }
      throw new Error('the schema was accepted');
    };
    const declared = { $schema: JSON_SCHEMA_2020_12, type: 'object' };
    expect(refusal({ ...declared, properties: { a: { type: 'string', maxLength: { $data: '1/b' } } } })).toContain(
      '$data references are not allowed',
    );
    expect(refusal({ ...declared, properties: { a: { $dynamicRef: 'https://schemas.example/evil.json#x' } } })).toContain(
      'only local references',
    );
    expect(refusal({ ...declared, properties: { a: { $ref: 'https://schemas.example/evil.json' } } })).toContain('only local references');
    expect(refusal({ ...declared, $anchor: 'a', properties: { a: { type: 'string', pattern: '^(a)\\1$' } } })).toContain('linear-time');
    expect(refusal({ ...declared, properties: { a: { type: 'string', maxLenght: 3 } } })).toContain('unknown keyword: "maxLenght"');
  });

  it('checks a 2020-12 pattern in linear time', () => {
    const validate = validatorOf({ type: 'object', $anchor: 'root', properties: { a: { type: 'string', pattern: '^(a+)+$' } } });
    const started = Date.now();
    expect(validate({ a: `${'a'.repeat(50_000)}!` })).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
