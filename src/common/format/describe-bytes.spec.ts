import { describeBytes } from './describe-bytes.js';

describe('describeBytes', () => {
  it.each([
    [0, '0 bytes'],
    [1023, '1023 bytes'],
    [1024, '1 KiB'],
    [1536, '1.5 KiB'],
    [64 * 1024 * 1024, '64 MiB'],
    [1024 ** 3, '1 GiB'],
    [1.25 * 1024 ** 3, '1.3 GiB'],
    [5 * 1024 ** 4, '5 TiB'],
  ])('writes %p as %p', (bytes, text) => {
    expect(describeBytes(bytes)).toBe(text);
  });
});
