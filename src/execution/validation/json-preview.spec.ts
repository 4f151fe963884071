import { isPlainObject, oneLine, orList, previewJson, quoteValue } from './json-preview.js';

describe('previewJson', () => {
  it('renders small values as JSON', () => {
    expect(previewJson({ a: [1, 'x', null, true] })).toBe('{"a":[1,"x",null,true]}');
  });

  it('cuts anything longer than 60 characters and marks the cut', () => {
    const preview = previewJson({ text: 'y'.repeat(5_000_000), more: [1, 2, 3] });
    expect(preview).toHaveLength(60);
    expect(preview.endsWith('…')).toBe(true);
  });

  it('stops descending into deeply nested values', () => {
    let nested: unknown = 1;
    for (let i = 0; i < 1_000; i++) nested = [nested];
    expect(previewJson(nested, 1_000)).toBe(`${'['.repeat(8)}…${']'.repeat(8)}`);
  });
});

describe('quoteValue and oneLine', () => {
  it('puts strings in single quotes on one line', () => {
    expect(quoteValue('a\nb "c"')).toBe(`'a\\nb "c"'`);
    expect(quoteValue(5)).toBe('5');
    expect(oneLine('x'.repeat(100), 10)).toBe(`${'x'.repeat(9)}…`);
  });

  it('joins alternatives with "or"', () => {
    expect(orList(["'a'"])).toBe("'a'");
    expect(orList(["'a'", "'b'", "'c'"])).toBe("'a', 'b' or 'c'");
  });
});

describe('isPlainObject', () => {
  it('accepts JSON objects only', () => {
    expect(isPlainObject(JSON.parse('{"__proto__": {}}'))).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
    expect([[], null, new Date(), new Map(), 'x'].some(isPlainObject)).toBe(false);
  });
});
