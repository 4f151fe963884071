import { AppError, conflict, forbidden, notFound } from '../common/errors/app-error.js';

// The protocol endpoints (token, registration, revocation, and the authorization endpoint before it can
// redirect) answer in OAuth's own error shape, {error, error_description} (RFC 6749 5.2, RFC 7591 3.2.2),
// which OAuth clients parse; the console's routes under /v1/oauth answer in the service's one error shape.
export class OAuthProtocolError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
    this.name = 'OAuthProtocolError';
  }

  toJSON(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

export const invalidRequest = (description: string) => new OAuthProtocolError(400, 'invalid_request', description);
export const invalidClient = (description: string) => new OAuthProtocolError(401, 'invalid_client', description);
export const invalidGrantError = (description: string) => new OAuthProtocolError(400, 'invalid_grant', description);
export const unsupportedGrantType = (grantType: string) =>
  new OAuthProtocolError(
    400,
    'unsupported_grant_type',
    `grant_type '${grantType}' is not supported; use authorization_code or refresh_token`,
  );
export const invalidTarget = (description: string) => new OAuthProtocolError(400, 'invalid_target', description);
export const invalidScope = (description: string) => new OAuthProtocolError(400, 'invalid_scope', description);
export const invalidRedirectUri = (description: string) => new OAuthProtocolError(400, 'invalid_redirect_uri', description);
export const invalidClientMetadata = (description: string) => new OAuthProtocolError(400, 'invalid_client_metadata', description);

// Refused before the request can be sent back to the client (the client or its redirect URI is not known):
// shown to the person whose browser followed the link, never redirected (RFC 6749 4.1.2.1).
export const authorizationRefused = (description: string) => new AppError(400, 'oauth_request_invalid', description);
export const oauthHostNotAllowed = (host: string) =>
  new AppError(
    403,
    'host_not_allowed',
    `The Host '${host}' is not one of this service's names, and without PUBLIC_URL the OAuth documents and endpoints are built from it; call the service by one of its names (ALLOWED_HOSTS), or the operator sets PUBLIC_URL`,
  );
export const externalIssuerOnly = () =>
  notFound(
    'oauth_external_issuer',
    'This service does not issue tokens: it accepts those of its OAUTH_ISSUER (see /.well-known/oauth-protected-resource)',
  );

export const oauthRequestNotFound = (requestId: string) =>
  notFound('oauth_request_not_found', `No pending authorization request with id '${requestId}'`);
export const oauthRequestDecided = (requestId: string) =>
  conflict('oauth_request_decided', `The authorization request '${requestId}' was already decided; the client must start a new one`);
export const oauthRequestExpired = (requestId: string) =>
  new AppError(410, 'oauth_request_expired', `The authorization request '${requestId}' expired; the client must start a new one`);
export const tooManyConsents = (limit: number) =>
  forbidden(
    'too_many_oauth_consents',
    `The tenant has ${limit} live OAuth consents, the most it may have; end those of clients it no longer uses (revoking a client's token in the API key listing, DELETE /v1/api-keys/{keyId}, ends its consent), then approve this request again`,
    { limit },
  );
