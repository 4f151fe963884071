import { AppError, badRequest, conflict, forbidden, notFound } from '../common/errors/app-error.js';

export const tenantNotFound = (tenantId: string) => notFound('tenant_not_found', `No tenant with id '${tenantId}'`);
export const apiKeyNotFound = (keyId: string) => notFound('api_key_not_found', `No API key with id '${keyId}'`);
export const tenantNameTaken = (name: string) => conflict('tenant_name_taken', `A tenant named '${name}' already exists`);
export const tenantNameLikeId = (name: string) =>
  badRequest(
    'tenant_name_like_id',
    `A tenant cannot be named '${name}': it is shaped like a tenant id (a UUID), and an external issuer's tenant claim could then name two tenants; choose a name that is not a UUID`,
  );

export const missingCredentials = () => new AppError(401, 'unauthorized', 'Missing credentials: send Authorization: Bearer <API key>');
export const invalidCredentials = () => new AppError(401, 'unauthorized', 'The API key is invalid or has been revoked');
export const adminRouteForbidden = () => new AppError(403, 'forbidden', 'This route takes the admin token, not a tenant API key');
export const tenantRouteForbidden = () => new AppError(403, 'forbidden', 'This route takes a tenant API key, not the admin token');

export const apiKeyExpired = (expiredAt: Date) =>
  new AppError(401, 'api_key_expired', `The API key expired at ${expiredAt.toISOString()}; ask an admin of the tenant for a new one`);

const ROLE_HINT: Record<string, string> = {
  admin: 'an admin key',
  agent: 'an agent key (or an admin key)',
  approver: 'an approver key (or an admin key)',
};

export const forbiddenForRole = (role: string, allowed: readonly string[]) => {
  const who = allowed.filter((r) => r !== 'admin');
  const needs = who.length === 0 ? ROLE_HINT.admin : who.map((r) => ROLE_HINT[r] ?? r).join(' or ');
  return new AppError(403, 'forbidden_for_role', `An ${role} key may not do this; it takes ${needs}.`, {
    details: { role, allowedRoles: [...allowed] },
  });
};

export const tooManyApiKeys = (limit: number) =>
  forbidden(
    'too_many_api_keys',
    `A tenant has at most ${limit} live API keys (not revoked, not expired; OAuth clients' tokens are not counted); revoke keys it no longer uses (DELETE /v1/api-keys/{keyId}), then issue this one again`,
    { limit },
  );

export const invalidGrant = (why: string) => badRequest('invalid_key_grant', `This key cannot be made: ${why}.`);

// RFC 6750's invalid_token: an OAuth access token shown somewhere other than the resource it was issued for.
export const tokenNotForThisResource = (resource: string) =>
  new AppError(401, 'invalid_token', `This OAuth access token is accepted only at ${resource} (the MCP endpoint it was issued for)`);
