import { AppError } from '../common/errors/app-error.js';

export const rateLimited = (what: string, limit: number, windowS: number, retryAfterS: number) =>
  new AppError(429, 'rate_limited', `Too many ${what} for this tenant: at most ${limit} per ${windowS} s; retry after ${retryAfterS} s`, {
    headers: { 'Retry-After': String(retryAfterS) },
  });
