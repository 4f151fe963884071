import fc from 'fast-check';
import { canonicalJson } from '../common/json/canonical-json.js';

// The recursive writer the fingerprints of stored keys were made with.
function recursive(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(recursive).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${recursive((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

describe('canonicalJson', () => {
  it('writes what the recursive writer wrote, so fingerprints of stored keys still match', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => expect(canonicalJson(value)).toBe(recursive(value))),
      { numRuns: 500 },
    );
    expect(canonicalJson({ b: [1, { d: undefined, c: 'x' }], a: null, u: undefined })).toBe('{"a":null,"b":[1,{"c":"x"}]}');
  });

  it('fingerprints arguments nested 200,000 deep without overflowing the stack', () => {
    const deep = JSON.parse(`${'['.repeat(200_000)}${']'.repeat(200_000)}`) as unknown;
    const text = canonicalJson({ tool: 'write_file', arguments: { path: 'x', deep } });
    expect(text.length).toBe(400_000 + '{"arguments":{"deep":,"path":"x"},"tool":"write_file"}'.length);
  });
});
