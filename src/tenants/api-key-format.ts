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

// Once per authenticated request: the one-shot hash skips the Hash object createHash builds. Secrets are
// compared by their hashes, so the comparison takes the same time whatever their lengths.
export function hashApiKey(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

// Constant-time comparison of two hashes made by hashApiKey.
export function hashesEqual(given: Uint8Array, expected: Uint8Array): boolean {
  return given.length === expected.length && timingSafeEqual(given, expected);
}

// The token of an `Authorization: Bearer <token>` header; null when there is none of that form.
export function bearerToken(header: unknown): string | null {
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}
