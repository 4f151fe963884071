import { jsonTextNestsDeeperThan } from './json-text-depth.js';

describe('jsonTextNestsDeeperThan: the depth of a JSON text, read before it is parsed', () => {
  const nested = (levels: number) => '{"a":'.repeat(levels - 1) + '[1]' + '}'.repeat(levels - 1);

  it('counts objects and arrays as bounded-json does: the outermost is level 1', () => {
    expect(jsonTextNestsDeeperThan('1', 0)).toBe(false);
    expect(jsonTextNestsDeeperThan('{}', 0)).toBe(true);
    expect(jsonTextNestsDeeperThan('{}', 1)).toBe(false);
    expect(jsonTextNestsDeeperThan(nested(256), 256)).toBe(false);
    expect(jsonTextNestsDeeperThan(nested(257), 256)).toBe(true);
    // Siblings do not add up.
    expect(jsonTextNestsDeeperThan(JSON.stringify({ a: [{ b: 1 }], c: [{ d: [2] }], e: {} }), 4)).toBe(false);
    expect(jsonTextNestsDeeperThan(JSON.stringify({ a: [{ b: 1 }], c: [{ d: [2] }], e: {} }), 3)).toBe(true);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(jsonTextNestsDeeperThan(JSON.stringify({ s: '[[[[{{{{', t: 'a"[[[[\\"{{{{' }), 1)).toBe(false);
    expect(jsonTextNestsDeeperThan(JSON.stringify({ s: '\\', t: [[1]] }), 2)).toBe(true);
  });

  it('cannot be lowered by closing brackets that open nothing', () => {
    expect(jsonTextNestsDeeperThan(']]]]' + '['.repeat(5), 4)).toBe(true);
  });

  it('reads a text of hundreds of thousands of levels quickly, stopping at the cap', () => {
    const deep = '['.repeat(700_000) + ']'.repeat(700_000);
    const started = performance.now();
    expect(jsonTextNestsDeeperThan(deep, 256)).toBe(true);
    expect(jsonTextNestsDeeperThan('[' + '1,'.repeat(1_000_000) + '1]', 256)).toBe(false);
    expect(performance.now() - started).toBeLessThan(500);
  });
});
