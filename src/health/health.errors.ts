import { AppError } from '../common/errors/app-error.js';

export const databaseUnavailable = () => new AppError(503, 'database_unavailable', 'The database does not answer');

export const rateLimitStoreDown = () =>
  new AppError(
    503,
    'rate_limit_store_unavailable',
    'The rate-limit store (REDIS_URL) does not answer; tenant requests are refused until it does',
    {
      headers: { 'Retry-After': '1' },
    },
  );
