import { measureJson } from '../common/json/bounded-json.js';
import { JsonText, writeJson } from '../common/json/json-text.js';
import type { ListWorkspaceResult, WorkspaceEntry } from './fs/workspace-tree.walker.js';
import { writeListingJson } from './listing-json.js';

const listingOf = (names: string[], details = false): ListWorkspaceResult => ({
  path: 'tree',
  entries: names.map((name): WorkspaceEntry => ({
    name,
    path: `tree/${name}`,
    type: 'file',
    ...(details ? { size: 12345, modified: '2026-11-27T07:00:00.000Z' } : {}),
  })),
  truncated: true,
});

describe('writeListingJson', () => {
  const plain = listingOf(Array.from({ length: 500 }, (_, i) => `file-${i}.txt`));

  it('writes what JSON.stringify writes, with its UTF-8 length, when the listing is within the cap', () => {
    for (const listing of [plain, listingOf(['é "q" \\ ü.txt', 'b.txt'], true)]) {
      const text = JSON.stringify(listing);
      expect(writeListingJson(listing, 32 * 1024 * 1024)).toEqual({ text, bytes: Buffer.byteLength(text) });
    }
  });

  it('writes nothing for a listing whose names alone pass the cap', () => {
    const written = writeListingJson(plain, 1024);
    expect(written).toEqual({ overBytes: expect.any(Number) });
    expect((written as { overBytes: number }).overBytes).toBeGreaterThan(1024);
  });

  // Names JSON writes six bytes a character for: the bounds straddle the cap, so it is written entry by entry.
  const escaped = listingOf(Array.from({ length: 100 }, (_, i) => `${'\u0001'.repeat(50)}${i}`));
  const exact = Buffer.byteLength(JSON.stringify(escaped));

  it('between the bounds, writes the same text when it fits, to the byte at the cap', () => {
    expect(writeListingJson(escaped, exact)).toEqual({ text: JSON.stringify(escaped), bytes: exact });
  });

  it('between the bounds, stops once the cap is passed, within one entry of it', () => {
    const written = writeListingJson(escaped, exact - 1) as { overBytes: number };
    expect(written.overBytes).toBeGreaterThan(exact - 1);
    const capped = writeListingJson(escaped, Math.floor(exact / 2)) as { overBytes: number };
    expect(capped.overBytes).toBeGreaterThan(Math.floor(exact / 2));
    expect(capped.overBytes).toBeLessThan(Math.floor(exact / 2) + Buffer.byteLength(JSON.stringify(escaped.entries[0])) + 1);
  });

  it('answers a listing past the cap as a result the caps drop and no writer writes', () => {
    const oversized = JsonText.oversized(2048, 3);
    expect(measureJson({ result: oversized }, { maxDepth: 256, maxBytes: 1024 })).toEqual({ exceeded: 'size' });
    expect(() => writeJson({ result: oversized })).toThrow(/not written/);
    expect(() => JSON.stringify({ result: oversized })).toThrow(/not written/);
  });
});
