import { AppError } from '../common/errors/app-error.js';

export const databaseUnavailable = () => new AppError(503, 'database_unavailable', 'The database does not answer');
