import { utf8Bytes } from './utf8-bytes.js';

describe('utf8Bytes', () => {
  it.each([
    ['ASCII', 'L'.repeat(300_000)],
    ['Latin-1 past ASCII', `café ${'é'.repeat(1000)}`],
    ['two-byte and astral', `中文 🙂 ${'ж'.repeat(1000)}`],
    ['a lone surrogate (written as U+FFFD)', 'a\ud800b'],
    ['empty', ''],
  ])('gives the bytes Buffer.from gives: %s', (_, text) => {
    const bytes = utf8Bytes(text);
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(bytes.equals(Buffer.from(text, 'utf8'))).toBe(true);
  });
});
