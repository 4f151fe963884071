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
}

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

  authorizationUrl(provider: ProviderCredentials, request: { redirectUri: string; scopes: string[]; state: string; codeChallenge: string }): URL {
    return oauth.buildAuthorizationUrl(this.configuration(provider), {
      redirect_uri: request.redirectUri,
      ...(request.scopes.length > 0 && { scope: request.scopes.join(' ') }),
      state: request.state,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
    });
  }

  // `callbackUrl`: the redirect URI with the query the provider sent. The library checks the state, the iss
  // (RFC 9207: when present it must be the issuer; when the server says it sends one, it must be there) and
  // sends the PKCE verifier.
  async exchange(provider: ProviderCredentials, callbackUrl: URL, checks: { state: string; codeVerifier: string }): Promise<IssuedTokens> {
    const tokens = await oauth.authorizationCodeGrant(this.configuration(provider), callbackUrl, { expectedState: checks.state, pkceCodeVerifier: checks.codeVerifier });
    return issued(tokens);
  }

  async refresh(provider: ProviderCredentials, refreshToken: string): Promise<IssuedTokens> {
    const tokens = await oauth.refreshTokenGrant(this.configuration(provider), refreshToken);
    const next = issued(tokens);
    // A server that does not rotate refresh tokens answers none: the old one stays good.
    return { ...next, refreshToken: next.refreshToken ?? refreshToken };
  }

  async revoke(provider: ProviderCredentials, token: string, hint: 'access_token' | 'refresh_token'): Promise<void> {
    if (!provider.metadata.revocation_endpoint) return;
    await oauth.tokenRevocation(this.configuration(provider), token, { token_type_hint: hint });
  }

  private configuration(provider: ProviderCredentials): oauth.Configuration {
    const config = new oauth.Configuration({ ...provider.metadata }, provider.clientId, provider.clientSecret);
    config[oauth.customFetch] = this.fetch;
    if (insecureAllowed(new URL(provider.metadata.token_endpoint), this.allowHosts)) oauth.allowInsecureRequests(config);
    return config;
  }
}

function issued(tokens: oauth.TokenEndpointResponse & oauth.TokenEndpointResponseHelpers): IssuedTokens {
  const expiresIn = tokens.expiresIn();
  return {
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token ?? null,
    expiresAt: expiresIn === undefined ? null : new Date(Date.now() + expiresIn * 1000),
    scopes: typeof tokens.scope === 'string' ? tokens.scope.split(' ').filter(Boolean) : null,
  };
}
