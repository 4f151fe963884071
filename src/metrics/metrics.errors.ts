import { AppError } from '../common/errors/app-error.js';

export const metricsTokenMissing = () =>
  new AppError(401, 'unauthorized', 'Missing credentials: send Authorization: Bearer <METRICS_TOKEN>');
export const metricsTokenInvalid = () => new AppError(401, 'unauthorized', 'The metrics token is wrong');
