import { boundedJson, measureJson } from './bounded-json.js';

const nested = (levels: number): unknown => {
  let value: unknown = [];
  for (let i = 1; i < levels; i++) value = [value];
  return value;
};

describe('bounded JSON', () => {
  const limits = { maxDepth: 8, maxBytes: 1000 };

  it('writes what JSON.stringify writes for a value within the limits', () => {
    const value = { a: [1, 'two', null, true, undefined, { b: new Date(0) }], skipped: undefined, s: 'quote " and \u0001' };
    expect(boundedJson(value, limits)).toEqual({ text: JSON.stringify(value) });
    expect(measureJson(value, limits)).toBe('fits');
  });

  it('refuses 200,000 levels of nesting without overflowing the stack', () => {
    const deep = nested(200_000);
    expect(boundedJson(deep, limits)).toEqual({ exceeded: 'depth' });
    expect(measureJson({ result: deep }, { maxDepth: 256, maxBytes: 10_000_000 })).toEqual({ exceeded: 'depth' });
  });

  it('counts the outermost container as level 1', () => {
    expect(measureJson(nested(8), limits)).toBe('fits');
    expect(measureJson(nested(9), limits)).toEqual({ exceeded: 'depth' });
    expect(measureJson('a string', { maxDepth: 0, maxBytes: 100 })).toBe('fits');
  });

  it('measures UTF-8 bytes exactly at the edge of the size cap', () => {
    // 'é' is two bytes: 499 of them and the quotes are 1000 bytes.
    expect(boundedJson('é'.repeat(500), limits)).toEqual({ exceeded: 'size' });
    expect(boundedJson('é'.repeat(499), limits)).toEqual({ text: JSON.stringify('é'.repeat(499)) });
    const escaped = '\u0001'.repeat(166);
    expect(measureJson(escaped, limits)).toBe('fits');
    expect(measureJson(escaped + '\u0001', limits)).toEqual({ exceeded: 'size' });
  });

  it('stops early on a huge value, and on one that shares a subtree over and over', () => {
    expect(measureJson('x'.repeat(50_000_000), limits)).toEqual({ exceeded: 'size' });
    let shared: unknown = ['x'];
    for (let i = 0; i < 7; i++) shared = [shared, shared, shared, shared, shared, shared, shared, shared];
    expect(measureJson(shared, limits)).toEqual({ exceeded: 'size' });
  });

  it('reports a cycle as too deep, and a BigInt or a throwing toJSON as not JSON', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(boundedJson(cycle, limits)).toEqual({ exceeded: 'depth' });
    expect(boundedJson({ n: 1n }, limits)).toEqual({ exceeded: 'not_json' });
    expect(
      measureJson(
        {
          bad: {
            toJSON: () => {
              throw new Error('no');
            },
          },
        },
        limits,
      ),
    ).toEqual({ exceeded: 'not_json' });
  });
});
