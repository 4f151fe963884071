import { AppError, conflict, notFound } from '../common/errors/app-error.js';

export const tenantNotFound = (tenantId: string) => notFound('tenant_not_found', `No tenant with id '${tenantId}'`);
export const apiKeyNotFound = (keyId: string) => notFound('api_key_not_found', `No API key with id '${keyId}'`);
export const tenantNameTaken = (name: string) => conflict('tenant_name_taken', `A tenant named '${name}' already exists`);

export const missingCredentials = () =>
  new AppError(401, 'unauthorized', 'Missing credentials: send Authorization: Bearer <API key>');
export const invalidCredentials = () => new AppError(401, 'unauthorized', 'The API key is invalid or has been revoked');
export const adminRouteForbidden = () =>
  new AppError(403, 'forbidden', 'This route takes the admin token, not a tenant API key');
export const tenantRouteForbidden = () =>
  new AppError(403, 'forbidden', 'This route takes a tenant API key, not the admin token');
