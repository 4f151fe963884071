import { AppError, badRequest, conflict, notFound, unprocessable } from '../common/errors/app-error.js';

export const providerNotFound = (ref: string) => notFound('auth_provider_not_found', `No auth provider '${ref}'`);
export const providerSlugTaken = (slug: string) =>
  conflict('auth_provider_slug_taken', `An auth provider with slug '${slug}' already exists`);
export const tooManyProviders = (limit: number) =>
  new AppError(
    403,
    'too_many_auth_providers',
    `A tenant has at most ${limit} auth providers; delete one it no longer uses (DELETE /v1/auth-providers/{id}), or change one with PATCH`,
    { details: { limit } },
  );
export const invalidProvider = (why: string) => unprocessable('invalid_auth_provider', `The auth provider is refused: ${why}`);
export const clientIdTaken = (signIn: string) =>
  conflict(
    'client_id_taken',
    `Another tenant has an auth provider with this client ID at ${signIn}: a client ID is one application's there. Register your own client at the provider and give its client ID`,
  );
export const discoveryFailed = (issuer: string, why: string) =>
  new AppError(502, 'discovery_failed', `The discovery document of ${issuer} could not be read: ${why}`);
export const connectionNotFound = (id: string) => notFound('connection_not_found', `No connection with id '${id}'`);
export const publicUrlRequired = () =>
  new AppError(
    503,
    'public_url_required',
    'Connections need PUBLIC_URL: the provider redirects people to <PUBLIC_URL>/v1/connections/callback',
  );
// One answer for a link that is unknown, used, expired or tampered with: the browser learns nothing more.
export const invalidLink = () =>
  badRequest('invalid_connection_link', 'This authorization link is unknown, already used or expired; ask for a new one and open it once');
export const connectionFailed = (why: string) => badRequest('connection_failed', `The connection was not made: ${why}`);
export const providerUnavailable = (provider: string, why: string) =>
  new AppError(502, 'auth_provider_unavailable', `The auth provider '${provider}' could not be reached: ${why}`);
export const userRequired = (provider: string) =>
  unprocessable(
    'user_required',
    `This tool acts as the end user at '${provider}': call it with Toolgate-User naming them (a key made with actAsUsers)`,
  );
export const tokenHostRefused = (host: string, provider: string) =>
  new AppError(
    403,
    'token_host_refused',
    `The tool's endpoint ${host} is not one of the apiHosts of '${provider}': its token is never sent there`,
  );
export const invalidFlow = () =>
  badRequest(
    'invalid_verification_flow',
    'This verification flow is unknown, already used or expired: the person connects again with a new link',
  );
export const connectionUserMismatch = () =>
  new AppError(
    403,
    'connection_user_mismatch',
    'The link was completed for another user: that connection is discarded and revoked; the person connects again with a new link',
  );
export const linksExceeded = (max: number) =>
  new AppError(
    429,
    'connection_links_exceeded',
    `The tenant has ${max} authorization links waiting to be opened, the most it may: a link is good for 10 minutes, so wait for one to be used or to expire, then ask again`,
    { details: { limit: max } },
  );
// Room comes back only as ended connections are deleted (connections.sweeper.ts), so the message says when.
export const tooManyConnections = (limit: number, retentionDays: number) =>
  new AppError(
    403,
    'too_many_connections',
    `The tenant has ${limit} connections, the most it may keep (pending, active, expired and revoked alike): revoke those it no longer needs (DELETE /v1/connections/{id}); a revoked, expired or failed connection is deleted ${retentionDays} days after it ended, and a link nobody completed an hour after it expired, which makes room`,
    { details: { limit } },
  );
