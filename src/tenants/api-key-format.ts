import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

// `tg_<prefix>_<secret>`: the prefix (48 bits) finds the row, the secret (256 bits) proves possession.
const KEY_PATTERN = /^tg_([0-9a-f]{12})_([0-9a-f]{64})$/;

export interface GeneratedApiKey {
  key: string;
  prefix: string;
  hash: Buffer;
}

export function generateApiKey(): GeneratedApiKey {
  const prefix = randomBytes(6).toString('hex');
  const key = `tg_${prefix}_${randomBytes(32).toString('hex')}`;
  return { key, prefix, hash: hashApiKey(key) };
}

export function parseApiKeyPrefix(key: string): string | null {
  return KEY_PATTERN.exec(key)?.[1] ?? null;
}

// Once per authenticated request: the one-shot hash skips the Hash object createHash builds.
export function hashApiKey(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

export function keyMatchesHash(key: string, storedHash: Uint8Array): boolean {
  const hash = hashApiKey(key);
  return storedHash.length === hash.length && timingSafeEqual(hash, storedHash);
}

// Compares two secrets in constant time, whatever their lengths.
export function secretsEqual(given: string, expected: string): boolean {
  return timingSafeEqual(hashApiKey(given), hashApiKey(expected));
}
