import { fitsOpenAiStrictMode } from './tool-formats.js';

const closed = (property: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties: { x: property },
  required: ['x'],
  additionalProperties: false,
  ...extra,
});

// strict: true is a promise that OpenAI's strict mode takes the schema as it is.
describe('fitsOpenAiStrictMode', () => {
  it('takes a closed object with every property required, nested objects, arrays, anyOf and local $refs', () => {
    expect(fitsOpenAiStrictMode(closed({ type: 'string', description: 'x', enum: ['a', 'b'] }))).toBe(true);
    expect(fitsOpenAiStrictMode(closed({ type: 'array', items: closed({ type: ['string', 'null'] }) }))).toBe(true);
    expect(fitsOpenAiStrictMode(closed({ anyOf: [{ type: 'string' }, { type: 'null' }] }))).toBe(true);
    expect(fitsOpenAiStrictMode(closed({ $ref: '#/$defs/d' }, { $defs: { d: { type: 'string' } } }))).toBe(true);
    // A parameter named like a keyword is a name, not the keyword.
    expect(
      fitsOpenAiStrictMode({
        type: 'object',
        properties: { pattern: { type: 'string' } },
        required: ['pattern'],
        additionalProperties: false,
      }),
    ).toBe(true);
  });

  it.each([
    'oneOf',
    'allOf',
    'not',
    'if',
    'then',
    'else',
    'uniqueItems',
    'patternProperties',
    'minProperties',
    'maxProperties',
    'propertyNames',
    'dependentRequired',
    'dependentSchemas',
    'unevaluatedProperties',
    'contains',
    'prefixItems',
    'default',
    'minLength',
    'pattern',
    'format',
    'minimum',
    'multipleOf',
    'minItems',
  ])('refuses %s anywhere in the schema', (keyword) => {
    expect(fitsOpenAiStrictMode(closed({ type: 'string', [keyword]: keyword === 'uniqueItems' ? true : {} }))).toBe(false);
  });

  it('refuses an optional property, an open object, a root that is not an object or is an anyOf, a remote or decorated $ref, and deep nesting', () => {
    expect(fitsOpenAiStrictMode({ type: 'object', properties: { x: { type: 'string' } }, additionalProperties: false })).toBe(false);
    expect(fitsOpenAiStrictMode({ type: 'object', properties: { x: { type: 'string' } }, required: ['x'] })).toBe(false);
    expect(fitsOpenAiStrictMode(closed({ type: 'object', properties: {} }))).toBe(false);
    expect(fitsOpenAiStrictMode({ type: 'string' })).toBe(false);
    expect(fitsOpenAiStrictMode({ type: 'object', anyOf: [closed({ type: 'string' })] })).toBe(false);
    expect(fitsOpenAiStrictMode(closed({ $ref: 'https://example.com/s.json' }))).toBe(false);
    expect(fitsOpenAiStrictMode(closed({ $ref: '#/$defs/d', type: 'string' }, { $defs: { d: { type: 'string' } } }))).toBe(false);
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 11; i++) deep = closed(deep);
    expect(fitsOpenAiStrictMode(deep)).toBe(false);
  });
});
