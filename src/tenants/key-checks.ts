import type { Tenant } from '../common/auth/auth.decorators.js';

// What ApiKeysService.authenticate answers for a key: its tenant, that it expired, or null (no such key).
export type KeyCheck = Tenant | { expiredAt: Date } | null;

// A request's key as the early check (http/early-refusals.ts) found it, before the body was read, kept for
// the guard so that the key is hashed and looked up once per request. Keyed by the request object both see
// (Express's request, Fastify's request), and gone with it.
const checked = new WeakMap<object, { token: string; found: KeyCheck }>();

export function keepKeyCheck(request: object, token: string, found: KeyCheck): void {
  checked.set(request, { token, found });
}

// undefined: this token was not checked early.
export function keyCheckOf(request: object, token: string): KeyCheck | undefined {
  const check = checked.get(request);
  return check?.token === token ? check.found : undefined;
}
