import { AppError } from '../common/errors/app-error.js';

export const rateLimited = (what: string, limit: number, windowS: number, retryAfterS: number, whose = 'this tenant') =>
  new AppError(429, 'rate_limited', `Too many ${what} for ${whose}: at most ${limit} per ${windowS} s; retry after ${retryAfterS} s`, {
    headers: { 'Retry-After': String(retryAfterS) },
  });

// The shared rate-limit store (Redis) did not answer in time: the request is refused rather than left to hang.
export const rateLimitStoreUnavailable = (retryAfterS: number) =>
  new AppError(503, 'rate_limit_unavailable', `The rate-limit store is not answering; nothing ran. Retry after ${retryAfterS} s.`, {
    headers: { 'Retry-After': String(retryAfterS) },
  });
