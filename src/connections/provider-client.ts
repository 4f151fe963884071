import * as oauth from 'openid-client';
import { providerFetch, insecureAllowed } from './provider-fetch.js';

// The authorization server's side of a provider, as stored (given by the admin or read from discovery).
export interface ProviderMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint?: string;
  // RFC 9207: the server names itself in every authorization response; one without `iss` is then refused.
  authorization_response_iss_parameter_supported?: boolean;
  // RFC 8707: the one resource (an MCP server's URL) its tokens are asked for, in every authorization and
  // token request; set on a provider discovered for an MCP source.
  resource?: string;
  // How the client authenticates at the token endpoint, as the server's registration answer said (a provider
  // Toolgate registered itself); absent: with its secret in the body, or none when it has no secret.
  token_endpoint_auth_method?: TokenEndpointAuthMethod;
}

export type TokenEndpointAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';

export interface ProviderCredentials {
  metadata: ProviderMetadata;
  clientId: string;
  clientSecret: string;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date | null;
  // What the server granted, when it said (it may grant less than was asked).
  scopes: string[] | null;
}

// The most of each token and of the granted scopes a connection keeps. Tokens are stored sealed, one row per
// person and provider; a provider of the tenant's own choosing may answer up to PROVIDER_MAX_BYTES, and
// without these a tenant's connections could keep a megabyte each in the database. Real access tokens
// (JWTs with groups included) are a few KiB.
export const TOKEN_MAX_CHARS = 16 * 1024;
export const SCOPE_MAX_CHARS = 4096;

// The OAuth client side of connections, on openid-client: discovery, the authorization URL with PKCE and
// state, the code exchange (state, iss and PKCE checked by the library), refresh and revocation. Every
// request goes through providerFetch, under the fetch_url address policy.
export class ProviderClient {
  private readonly fetch: oauth.CustomFetch;

  constructor(private readonly allowHosts: readonly string[]) {
    this.fetch = providerFetch(allowHosts);
  }

  // RFC 8414 or OpenID discovery: the OpenID document first, then the OAuth one. The document's issuer must be
  // the one asked for (the library checks it).
  async discover(issuer: string, clientId: string): Promise<ProviderMetadata> {
    const url = new URL(issuer);
    let lastError: unknown;
    for (const algorithm of ['oidc', 'oauth2'] as const) {
      try {
        const config = await oauth.discovery(url, clientId, undefined, undefined, {
          [oauth.customFetch]: this.fetch,
          algorithm,
          execute: insecureAllowed(url, this.allowHosts) ? [oauth.allowInsecureRequests] : [],
        });
        const found = config.serverMetadata();
        if (!found.authorization_endpoint || !found.token_endpoint) throw new Error('it names no authorization_endpoint or token_endpoint');
        return {
          issuer: found.issuer,
          authorization_endpoint: found.authorization_endpoint,
          token_endpoint: found.token_endpoint,
          ...(found.revocation_endpoint && { revocation_endpoint: found.revocation_endpoint }),
          ...(found.authorization_response_iss_parameter_supported === true && { authorization_response_iss_parameter_supported: true }),
        };
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError;
  }

  authorizationUrl(
    provider: ProviderCredentials,
    request: { redirectUri: string; scopes: string[]; state: string; codeChallenge: string },
  ): URL {
    return oauth.buildAuthorizationUrl(this.configuration(provider), {
      redirect_uri: request.redirectUri,
      ...(request.scopes.length > 0 && { scope: request.scopes.join(' ') }),
      state: request.state,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
      ...(provider.metadata.resource !== undefined && { resource: provider.metadata.resource }),
    });
  }

  // `callbackUrl`: the redirect URI with the query the provider sent. The library checks the state, the iss
  // (RFC 9207: when present it must be the issuer; when the server says it sends one, it must be there) and
  // sends the PKCE verifier.
  async exchange(provider: ProviderCredentials, callbackUrl: URL, checks: { state: string; codeVerifier: string }): Promise<IssuedTokens> {
    const tokens = await oauth.authorizationCodeGrant(
      this.configuration(provider),
      callbackUrl,
      { expectedState: checks.state, pkceCodeVerifier: checks.codeVerifier },
      resourceOf(provider),
    );
    return issued(tokens);
  }

  async refresh(provider: ProviderCredentials, refreshToken: string): Promise<IssuedTokens> {
    const tokens = await oauth.refreshTokenGrant(this.configuration(provider), refreshToken, resourceOf(provider));
    const next = issued(tokens);
    // A server that does not rotate refresh tokens answers none: the old one stays good.
    return { ...next, refreshToken: next.refreshToken ?? refreshToken };
  }

  async revoke(provider: ProviderCredentials, token: string, hint: 'access_token' | 'refresh_token'): Promise<void> {
    if (!provider.metadata.revocation_endpoint) return;
    await oauth.tokenRevocation(this.configuration(provider), token, { token_type_hint: hint });
  }

  // Both of a connection's tokens, the refresh token first (revoking it ends the grant at most servers);
  // each failure is handed to `failed`, never thrown: the tokens are already gone from Toolgate.
  async revokeTokens(
    provider: ProviderCredentials,
    tokens: { accessToken: string | null; refreshToken: string | null },
    failed: (error: unknown) => void,
  ): Promise<void> {
    if (!provider.metadata.revocation_endpoint) return;
    for (const [token, hint] of [
      [tokens.refreshToken, 'refresh_token'],
      [tokens.accessToken, 'access_token'],
    ] as const) {
      if (token !== null) await this.revoke(provider, token, hint).catch(failed);
    }
  }

  // A client without a secret (registered by its client ID metadata document, or as a public client) sends none.
  private configuration(provider: ProviderCredentials): oauth.Configuration {
    const { resource: _resource, token_endpoint_auth_method: method, ...server } = provider.metadata;
    const config = new oauth.Configuration(server, provider.clientId, provider.clientSecret, clientAuthOf(method, provider.clientSecret));
    config[oauth.customFetch] = this.fetch;
    if (insecureAllowed(new URL(provider.metadata.token_endpoint), this.allowHosts)) oauth.allowInsecureRequests(config);
    return config;
  }
}

// The method the registration settled on; without one, the secret in the body (openid-client's default) or none.
function clientAuthOf(method: TokenEndpointAuthMethod | undefined, secret: string): oauth.ClientAuth {
  if (method === 'none' || secret === '') return oauth.None();
  if (method === 'client_secret_basic') return oauth.ClientSecretBasic(secret);
  return oauth.ClientSecretPost(secret);
}

const resourceOf = (provider: ProviderCredentials) =>
  provider.metadata.resource === undefined ? undefined : { resource: provider.metadata.resource };

function issued(tokens: oauth.TokenEndpointResponse & oauth.TokenEndpointResponseHelpers): IssuedTokens {
  for (const [name, value, max] of [
    ['access_token', tokens.access_token, TOKEN_MAX_CHARS],
    ['refresh_token', tokens.refresh_token, TOKEN_MAX_CHARS],
    ['scope', tokens.scope, SCOPE_MAX_CHARS],
  ] as const) {
    if (typeof value === 'string' && value.length > max)
      throw new Error(`the provider's ${name} is ${value.length} characters, more than the ${max} a connection keeps`);
  }
  const expiresIn = tokens.expiresIn();
  return {
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token ?? null,
    expiresAt: expiresIn === undefined ? null : new Date(Date.now() + expiresIn * 1000),
    scopes: typeof tokens.scope === 'string' ? tokens.scope.split(' ').filter(Boolean) : null,
  };
}
