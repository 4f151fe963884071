import { SchemaExpansionError, schemaExpansion } from './schema-expansion.js';

// d_n = allOf[d_(n-1), d_(n-1)]: a few hundred bytes that apply 2^n subschemas to one value.
function doublingChain(n: number, keyword: 'definitions' | '$defs' = 'definitions'): Record<string, unknown> {
  const defs: Record<string, unknown> = { d0: { type: 'object' } };
  for (let i = 1; i <= n; i++) defs[`d${i}`] = { allOf: [{ $ref: `#/${keyword}/d${i - 1}` }, { $ref: `#/${keyword}/d${i - 1}` }] };
  return { type: 'object', [keyword]: defs, allOf: [{ $ref: `#/${keyword}/d${n}` }] };
}

describe('schemaExpansion', () => {
  it('counts each subschema applied to a value, following $refs', () => {
    expect(
      schemaExpansion(
        { type: 'object', properties: { a: { type: 'string' }, b: { $ref: '#/definitions/x' } }, definitions: { x: { type: 'number' } } },
        100,
      ),
    ).toBe(4);
    // d_i = itself + 2 × ($ref + d_(i-1)): 1, 5, 13, 29; the root adds itself and its allOf's $ref.
    expect(schemaExpansion(doublingChain(3), 100)).toBe(31);
  });

  it('refuses a chain of definitions that doubles at each step, in either dialect, before expanding it', () => {
    const started = performance.now();
    for (const schema of [doublingChain(29), doublingChain(40, '$defs')])
      expect(() => schemaExpansion(schema, 10_000)).toThrow(SchemaExpansionError);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('counts a $ref cycle through properties or items once: the value bounds it', () => {
    const tree = { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } } };
    expect(schemaExpansion(tree, 100)).toBeLessThan(10);
    const anchored = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $dynamicAnchor: 'node',
      type: 'object',
      properties: { c: { $dynamicRef: '#node' } },
    };
    expect(schemaExpansion(anchored, 100)).toBeLessThan(10);
  });

  it('refuses a $ref cycle that applies a schema to the same value again', () => {
    expect(() =>
      schemaExpansion(
        {
          definitions: { a: { allOf: [{ $ref: '#/definitions/b' }] }, b: { anyOf: [{ $ref: '#/definitions/a' }] } },
          $ref: '#/definitions/a',
        },
        100,
      ),
    ).toThrow(/same value/);
    expect(() => schemaExpansion({ $id: 'https://x.example/s', $anchor: 'self', not: { $ref: '#self' } }, 100)).toThrow(/same value/);
  });

  it('resolves pointers inside a subschema with its own $id against that subschema', () => {
    const schema = {
      type: 'object',
      properties: { inner: { $id: 'https://x.example/inner', definitions: { y: { type: 'string' } }, $ref: '#/definitions/y' } },
    };
    // The root, `inner`, and `y` found through inner's own $id (unresolved, it would be 2).
    expect(schemaExpansion(schema, 100)).toBe(3);
  });
});
