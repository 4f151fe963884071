import { Ajv } from 'ajv';
import { createToolAjv } from './ajv-factory.js';

// The linear uniqueItems must mean what AJV's own keyword means, and report the same error.
describe('uniqueItems in linear time', () => {
  const schema = { type: 'array', uniqueItems: true };
  const ours = createToolAjv().compile(schema);
  const theirs = new Ajv({ allErrors: true, verbose: true }).compile(schema);

  const cases: unknown[][] = [
    [],
    [1],
    [1, 1],
    [1, 1.0],
    [0, -0],
    [1, '1'],
    [true, 1],
    [null, null],
    [null, 'null'],
    [
      [1, 2],
      [2, 1],
    ],
    [
      [1, 2],
      [1, 2],
    ],
    [
      { a: 1, b: [2] },
      { b: [2], a: 1 },
    ],
    [{ a: 1 }, { a: 1, b: undefined }],
    [{ a: 1 }, { a: '1' }],
    [{ 'a,b': 1 }, { a: 1, b: 1 }],
    [['a,b'], ['a', 'b']],
    ['x', 'y', 'z', 'y', 'x'],
    [{}, []],
    [[], []],
    [{}, {}],
  ];

  it.each(cases.map((items) => [JSON.stringify(items), items]))('agrees with AJV on %s', (_text, items) => {
    const valid = ours(items);
    expect(valid).toBe(theirs(items));
    if (!valid) {
      // The same error; the pair named is two equal items (AJV may name another equal pair: it scans from the end).
      const [mine] = ours.errors!;
      expect(theirs.errors![0]).toMatchObject({ keyword: 'uniqueItems' });
      expect(mine).toMatchObject({ keyword: 'uniqueItems', instancePath: '', schemaPath: '#/uniqueItems' });
      const { i, j } = mine.params as { i: number; j: number };
      expect(i).toBeLessThan(j);
      expect(theirs([items[i], items[j]])).toBe(false);
      expect(mine.message).toMatch(/^must NOT have duplicate items \(items ## \d+ and \d+ are identical\)$/);
    }
  });

  it('leaves uniqueItems: false alone and checks nested arrays where they are', () => {
    expect(createToolAjv().compile({ type: 'array', uniqueItems: false })([1, 1])).toBe(true);
    const nested = createToolAjv().compile({ type: 'object', properties: { tags: { type: 'array', uniqueItems: true } } });
    expect(nested({ tags: [[1], [1]] })).toBe(false);
    expect(nested.errors).toEqual([expect.objectContaining({ instancePath: '/tags', params: { i: 0, j: 1 } })]);
  });
});
