import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import * as oauth from 'openid-client';
import { AppError } from '../common/errors/app-error.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { UNIQUE_TAKEN } from '../database/unique-violation.js';
import { checkEndpoint } from '../execution/net/endpoint-check.js';
import { safeFetch } from '../execution/net/safe-fetch.js';
import { AuthProvidersRepository, MAX_AUTH_PROVIDERS, type ProviderRecord, TOO_MANY } from './auth-providers.repository.js';
import { CALLBACK_PATH, endpointsMixedUp } from './auth-providers.service.js';
import { invalidProvider, publicUrlRequired, tooManyProviders } from './connections.errors.js';
import type { ProviderMetadata, TokenEndpointAuthMethod } from './provider-client.js';
import { insecureAllowed, policyRefusal, providerFetch } from './provider-fetch.js';

// Where Toolgate serves its own client ID metadata document; the URL is its client_id at every server that takes one.
export const CLIENT_METADATA_PATH = '/v1/connections/client-metadata.json';
const PROBE_TIMEOUT_MS = 10_000;
const PROBE_MAX_BYTES = 64 * 1024;
// The token endpoint authentications a registration asks for, in the order of preference.
const AUTH_METHODS: readonly TokenEndpointAuthMethod[] = ['none', 'client_secret_basic', 'client_secret_post'];

export const mcpAuthDiscoveryFailed = (url: string, why: string) =>
  new AppError(502, 'mcp_auth_discovery_failed', `Toolgate could not find how to sign in to the MCP server at ${safeOrigin(url)}: ${why}`);

// The slug of the provider discovered for an MCP server: the same URL gives the same provider in a tenant,
// so every version of the source (and every source of that server) shares its registration and connections.
export function discoveredSlug(serverUrl: string): string {
  return `mcp-${createHash('sha256').update(canonical(serverUrl)).digest('hex').slice(0, 16)}`;
}

// What Toolgate tells an authorization server about itself (a client ID metadata document, or the body of a
// dynamic registration).
export function clientMetadata(publicUrl: string): Record<string, unknown> {
  const base = publicUrl.replace(/\/+$/, '');
  return {
    client_id: `${base}${CLIENT_METADATA_PATH}`,
    client_name: 'Toolgate',
    client_uri: base,
    redirect_uris: [`${base}${CALLBACK_PATH}`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

// Toolgate as an MCP client that meets a server asking for OAuth (MCP authorization, 2025-11-25): the server's
// 401 names its protected resource metadata (RFC 9728), which names the authorization server, whose metadata
// (RFC 8414 or OpenID discovery) says how Toolgate registers: by its client ID metadata document when the
// server takes one, else by dynamic client registration (RFC 7591). The result is an ordinary auth provider
// of the tenant (discovered, `resource` bound to the server's URL, apiHosts the server's host alone), so the
// connections, their links, callback and refresh are the ones every provider uses. Every document is fetched
// under the fetch_url address policy, without following redirects.
@Injectable()
export class McpAuthDiscovery {
  private readonly allowHosts: readonly string[];
  private readonly publicUrl: string | null;
  private readonly fetch: oauth.CustomFetch;

  constructor(
    private readonly providers: AuthProvidersRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.allowHosts = config.tools.fetch.allowHosts;
    this.publicUrl = config.oauth.publicUrl;
    this.fetch = providerFetch(this.allowHosts);
  }

  // The provider discovered for this server before, or discovered and registered now.
  async providerFor(tenantId: string, serverUrl: string): Promise<ProviderRecord> {
    const slug = discoveredSlug(serverUrl);
    const known = await this.providers.findBySlug(tenantId, slug);
    if (known) return this.owned(known, serverUrl);
    if (this.publicUrl === null) throw publicUrlRequired();
    const found = await this.discover(serverUrl, this.publicUrl);
    const created = await this.providers.create(tenantId, {
      slug,
      name: `MCP server ${new URL(serverUrl).host}`,
      metadata: found.metadata,
      discovered: true,
      // The person who completes a source's link is the admin or user who asked for it, in Toolgate's own flow.
      verifyUrl: null,
      clientId: found.clientId,
      clientSecret: found.clientSecret,
      scopes: found.scopes,
      apiHosts: [new URL(serverUrl).host.toLowerCase()],
    });
    if (created === TOO_MANY) throw tooManyProviders(MAX_AUTH_PROVIDERS);
    if (created !== UNIQUE_TAKEN) return created;
    // Another import of the same server registered at the same time: its provider is the one.
    const other = await this.providers.findBySlug(tenantId, slug);
    if (!other) throw mcpAuthDiscoveryFailed(serverUrl, 'its provider was deleted while it was being registered; try again');
    return this.owned(other, serverUrl);
  }

  private owned(provider: ProviderRecord, serverUrl: string): ProviderRecord {
    if (provider.metadata.resource === undefined || !sameServer(provider.metadata.resource, serverUrl)) {
      throw invalidProvider(`the slug ${provider.slug} is taken by a provider that was not discovered for this MCP server`);
    }
    return provider;
  }

  private async discover(serverUrl: string, publicUrl: string) {
    try {
      const challenge = await this.challenge(serverUrl);
      const sdkAuth = await import('@modelcontextprotocol/sdk/client/auth.js');
      const { checkResourceAllowed } = await import('@modelcontextprotocol/sdk/shared/auth-utils.js');
      const { resourceMetadataUrl, scope } = sdkAuth.extractWWWAuthenticateParams(
        new Response(null, { status: 401, headers: { 'www-authenticate': challenge } }),
      );
      const resource = await sdkAuth.discoverOAuthProtectedResourceMetadata(
        serverUrl,
        resourceMetadataUrl ? { resourceMetadataUrl } : {},
        (url, init) =>
          this.fetch(String(url), {
            method: 'GET',
            headers: init?.headers as Record<string, string>,
            redirect: 'manual',
          } as Parameters<oauth.CustomFetch>[1]),
      );
      // RFC 9728 §3.3: the document must be about the server it was found for.
      const boundTo = resource.resource;
      if (!checkResourceAllowed({ requestedResource: canonical(serverUrl), configuredResource: boundTo })) {
        throw new Error(`its protected resource metadata names the resource ${boundTo}, not this server`);
      }
      const issuer = resource.authorization_servers?.[0];
      if (issuer === undefined) throw new Error('its protected resource metadata names no authorization server');
      const { server, algorithm } = await this.serverMetadata(issuer);
      // MCP authorization: a server that does not say it takes PKCE with S256 is not used.
      if (!server.code_challenge_methods_supported?.includes('S256'))
        throw new Error(`the authorization server ${issuer} does not advertise PKCE with S256`);
      if (!server.authorization_endpoint || !server.token_endpoint)
        throw new Error(`the authorization server ${issuer} names no authorization or token endpoint`);
      const mixUp = endpointsMixedUp(server, true);
      if (mixUp) throw new Error(mixUp);
      // Every endpoint it names is judged as fetch_url's destinations are, before anything is registered or kept.
      for (const endpoint of [
        server.authorization_endpoint,
        server.token_endpoint,
        server.revocation_endpoint,
        server.registration_endpoint,
      ]) {
        if (endpoint !== undefined) await checkEndpoint(endpoint, { allowHosts: this.allowHosts });
      }
      const { method, ...client } = await this.register(issuer, server, algorithm, publicUrl);
      const metadata: ProviderMetadata = {
        issuer: server.issuer,
        authorization_endpoint: server.authorization_endpoint,
        token_endpoint: server.token_endpoint,
        ...(server.revocation_endpoint && { revocation_endpoint: server.revocation_endpoint }),
        ...(server.authorization_response_iss_parameter_supported === true && { authorization_response_iss_parameter_supported: true }),
        resource: boundTo,
        ...(method && { token_endpoint_auth_method: method }),
      };
      const scopes = scope !== undefined ? scope.split(' ').filter(Boolean) : (resource.scopes_supported ?? []);
      return { metadata, ...client, scopes: [...new Set(scopes)].slice(0, 50) };
    } catch (error) {
      if (error instanceof AppError) throw error;
      const refusal = policyRefusal(error);
      if (refusal) throw refusal;
      throw mcpAuthDiscoveryFailed(serverUrl, describe(error));
    }
  }

  // The server's answer to a request without credentials: its WWW-Authenticate challenge (or '' when it
  // names no metadata document: the well-known locations are tried).
  private async challenge(serverUrl: string): Promise<string> {
    const probe = await safeFetch(
      {
        url: serverUrl,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'toolgate', version: '1' } },
        }),
        timeoutMs: PROBE_TIMEOUT_MS,
        maxBytes: PROBE_MAX_BYTES,
      },
      { allowHosts: this.allowHosts, maxRedirects: 0 },
    );
    if (probe.timedOut) throw new Error(`it did not answer within ${PROBE_TIMEOUT_MS} ms`);
    if (probe.status !== 401)
      throw new Error(
        `it answered ${probe.status} to a request without credentials, not 401: it does not ask for OAuth (drop auth from the source)`,
      );
    const header = probe.headers['www-authenticate'];
    return (Array.isArray(header) ? header.join(', ') : header) ?? '';
  }

  // RFC 8414 and OpenID discovery (openid-client checks that the document names the issuer asked for).
  private async serverMetadata(issuer: string): Promise<{ server: oauth.ServerMetadata; algorithm: 'oidc' | 'oauth2' }> {
    await checkEndpoint(issuer, { allowHosts: this.allowHosts });
    const url = this.checked(issuer);
    let lastError: unknown;
    for (const algorithm of ['oauth2', 'oidc'] as const) {
      try {
        const config = await oauth.discovery(url, 'toolgate', undefined, undefined, this.options(url, algorithm));
        return { server: config.serverMetadata(), algorithm };
      } catch (error) {
        if (policyRefusal(error)) throw error;
        lastError = error;
      }
    }
    throw lastError;
  }

  // A client ID metadata document where the server takes one (no secret: the document's URL is the client);
  // else dynamic client registration, asking for the token endpoint authentication the server lists (RFC 8414
  // §2; client_secret_basic when it lists none): `none` first, a public client as the document describes (its
  // codes are bound to PKCE, which the server must take), then client_secret_basic, then client_secret_post.
  // The method kept is the one the registration answer names (RFC 7591 §3.2.1: the server may settle on another).
  private async register(
    issuer: string,
    server: oauth.ServerMetadata,
    algorithm: 'oidc' | 'oauth2',
    publicUrl: string,
  ): Promise<{ clientId: string; clientSecret: string; method?: TokenEndpointAuthMethod }> {
    const document = clientMetadata(publicUrl);
    if (server.client_id_metadata_document_supported === true) return { clientId: document.client_id as string, clientSecret: '' };
    if (!server.registration_endpoint) {
      throw new Error(
        `the authorization server ${issuer} takes neither a client ID metadata document nor dynamic registration: create an auth provider for it by hand and name it in auth.provider`,
      );
    }
    this.checked(server.registration_endpoint);
    const supported = server.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    const asked = AUTH_METHODS.find((method) => supported.includes(method));
    if (asked === undefined)
      throw new Error(
        `the authorization server ${issuer} authenticates clients at its token endpoint only by ${supported.slice(0, 5).join(', ')}; Toolgate uses none (with PKCE), client_secret_basic or client_secret_post`,
      );
    const { client_id: _id, ...fields } = document;
    const url = new URL(issuer);
    const config = await oauth.dynamicClientRegistration(
      url,
      { ...fields, token_endpoint_auth_method: asked },
      undefined,
      this.options(url, algorithm),
    );
    const registered = config.clientMetadata();
    const answered = registered.token_endpoint_auth_method ?? asked;
    const method = AUTH_METHODS.find((known) => known === answered);
    const secret = typeof registered.client_secret === 'string' ? registered.client_secret : '';
    if (method === undefined)
      throw new Error(
        `the authorization server ${issuer} registered Toolgate for ${typeof answered === 'string' ? answered.slice(0, 64) : 'a method it did not name'}, which Toolgate does not use`,
      );
    if (method !== 'none' && secret === '')
      throw new Error(`the authorization server ${issuer} registered Toolgate for ${method} but gave it no client_secret`);
    return { clientId: registered.client_id, clientSecret: method === 'none' ? '' : secret, method };
  }

  private options(url: URL, algorithm: 'oidc' | 'oauth2') {
    return {
      [oauth.customFetch]: this.fetch,
      algorithm,
      execute: insecureAllowed(url, this.allowHosts) ? [oauth.allowInsecureRequests] : [],
    };
  }

  // https, or plain http to a host the operator opened in FETCH_ALLOW_HOSTS.
  private checked(raw: string): URL {
    const url = new URL(raw);
    if (url.protocol !== 'https:' && !insecureAllowed(url, this.allowHosts))
      throw new Error(`${safeOrigin(raw)} is not https (http only for a host opened in FETCH_ALLOW_HOSTS)`);
    return url;
  }
}

function canonical(url: string): string {
  const parsed = new URL(url);
  parsed.hash = '';
  return parsed.href;
}

function sameServer(resource: string, serverUrl: string): boolean {
  try {
    return new URL(resource).origin === new URL(serverUrl).origin;
  } catch {
    return false;
  }
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'the configured address';
  }
}

function describe(error: unknown): string {
  if (error instanceof oauth.ResponseBodyError)
    return `the authorization server answered ${error.error}${error.error_description ? `: ${error.error_description.slice(0, 200)}` : ''}`;
  return (error instanceof Error ? error.message : String(error)).slice(0, 300);
}
