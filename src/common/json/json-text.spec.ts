import { boundedJson, measureJson } from './bounded-json.js';
import { JsonText, writeJson, writeJsonBytes } from './json-text.js';

const listing = { path: 'src', entries: [{ name: 'é "q".ts', path: 'src/é "q".ts', type: 'file' }], truncated: false };
const textOf = (value: unknown) => {
  const text = JSON.stringify(value);
  return JsonText.written(text, { bytes: Buffer.byteLength(text), depth: 3 });
};

describe('JSON text', () => {
  it('is spliced in as it is by writeJson, anywhere in the value, in order', () => {
    const first = textOf(listing);
    const second = textOf({ other: ['x', 1] });
    const answer = { status: 'ok', result: first, more: [second, 'after'], last: first };
    expect(writeJson(answer)).toBe(JSON.stringify({ status: 'ok', result: listing, more: [{ other: ['x', 1] }, 'after'], last: listing }));
  });

  it('is written as the same JSON in UTF-8 bytes by writeJsonBytes, multi-byte characters and all', () => {
    const first = textOf(listing);
    const answer = { status: 'ok', note: 'naïve 中文 🙂', result: first, more: [textOf({ other: ['é', 1] }), 'after'], last: first };
    const bytes = writeJsonBytes(answer);
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(bytes.equals(Buffer.from(writeJson(answer), 'utf8'))).toBe(true);
    expect(writeJsonBytes({ plain: ['a', 2] }).toString('utf8')).toBe('{"plain":["a",2]}');
    expect(writeJsonBytes(undefined).toString('utf8')).toBe('null');
  });

  it('reads as the value it holds to any other writer (JSON.stringify calls its toJSON)', () => {
    const answer = { result: textOf(listing) };
    expect(JSON.stringify(answer)).toBe(JSON.stringify({ result: listing }));
    expect(JSON.parse(JSON.stringify(answer))).toEqual({ result: listing });
  });

  it('shows no properties to code that walks a result', () => {
    const text = textOf(listing);
    expect(Object.keys(text)).toEqual([]);
    expect(Object.entries(text)).toEqual([]);
    expect(text.isObject).toBe(true);
    expect(textOf(['a']).isObject).toBe(false);
  });

  it('takes no string a tool wrote for one of its markers', () => {
    // What a marker looks like without the nonce: a NUL, then something, then an index.
    const lookalikes = ['\u00000:0', '\u0000:0', `\u0000${'0'.repeat(32)}:0`];
    const answer = { a: lookalikes, result: textOf(listing), b: lookalikes };
    expect(writeJson(answer)).toBe(JSON.stringify({ a: lookalikes, result: listing, b: lookalikes }));
  });

  it('writes a value without JSON text as JSON.stringify does, and nests within another writeJson', () => {
    const value = { a: [1, 'two', null], d: new Date(0), u: undefined };
    expect(writeJson(value)).toBe(JSON.stringify(value));
    const inner = { toJSON: () => JSON.parse(writeJson({ r: textOf(listing) })) as unknown };
    expect(writeJson({ outer: inner, also: textOf([1]) })).toBe(JSON.stringify({ outer: { r: listing }, also: [1] }));
  });

  it('is measured by its byte count and depth, without being parsed', () => {
    const text = textOf(listing);
    const bytes = Buffer.byteLength(JSON.stringify({ result: listing }));
    expect(measureJson({ result: text }, { maxDepth: 4, maxBytes: bytes })).toBe('fits');
    expect(measureJson({ result: text }, { maxDepth: 4, maxBytes: bytes - 1 })).toEqual({ exceeded: 'size' });
    expect(measureJson({ result: text }, { maxDepth: 3, maxBytes: bytes })).toEqual({ exceeded: 'depth' });
    expect(boundedJson({ result: text }, { maxDepth: 4, maxBytes: bytes })).toEqual({ text: JSON.stringify({ result: listing }) });
    // A parse would see this text is not the JSON it claims; the measure trusts the producer's counts.
    const unparsed = JsonText.written('{"not": json', { bytes: 12, depth: 1 });
    expect(measureJson(unparsed, { maxDepth: 1, maxBytes: 12 })).toBe('fits');
  });
});
