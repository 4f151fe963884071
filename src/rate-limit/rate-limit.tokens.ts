export type { RateLimitStore } from './rate-limit.store.js';
export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');
