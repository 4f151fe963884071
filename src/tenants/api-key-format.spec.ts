import { generateApiKey, hashApiKey, hashesEqual, parseApiKeyPrefix } from './api-key-format.js';

describe('API key format', () => {
  it('generates tg_<prefix>_<secret> keys with at least 128 random bits that match their own hash only', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.key).toMatch(/^tg_[0-9a-f]{12}_[0-9a-f]{64}$/);
    expect(parseApiKeyPrefix(a.key)).toBe(a.prefix);
    expect(hashesEqual(hashApiKey(a.key), a.hash)).toBe(true);
    expect(hashesEqual(hashApiKey(b.key), a.hash)).toBe(false);
    expect(a.key).not.toBe(b.key);
  });

  it('does not parse strings that are not keys', () => {
    for (const bad of ['', 'tg_', 'tg_abc_def', `tg_${'g'.repeat(12)}_${'0'.repeat(64)}`, `x${generateApiKey().key}`]) {
      expect(parseApiKeyPrefix(bad)).toBeNull();
    }
  });

  it('compares secrets of different lengths by their hashes, without throwing', () => {
    expect(hashesEqual(hashApiKey('short'), hashApiKey('a-much-longer-secret'))).toBe(false);
    expect(hashesEqual(hashApiKey('same-secret-value'), hashApiKey('same-secret-value'))).toBe(true);
    expect(hashesEqual(hashApiKey('short'), Buffer.alloc(4))).toBe(false);
  });
});
