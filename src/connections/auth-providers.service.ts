import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/errors/app-error.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { checkEndpoint } from '../execution/net/endpoint-check.js';
import { UNIQUE_TAKEN } from '../database/unique-violation.js';
import {
  AuthProvidersRepository,
  MAX_AUTH_PROVIDERS,
  type ProviderFields,
  type ProviderRecord,
  TOO_MANY,
} from './auth-providers.repository.js';
import { ConnectionsRepository } from './connections.repository.js';
import {
  clientIdTaken,
  discoveryFailed,
  invalidProvider,
  providerNotFound,
  providerSlugTaken,
  tooManyProviders,
} from './connections.errors.js';
import type {
  AuthProviderListResponseDto,
  AuthProviderResponseDto,
  CreateAuthProviderDto,
  UpdateAuthProviderDto,
} from './dto/auth-provider.dto.js';
import { ProviderClient, type ProviderMetadata } from './provider-client.js';
import { insecureAllowed, policyRefusal } from './provider-fetch.js';

export const CALLBACK_PATH = '/v1/connections/callback';
const REVOKE_AT_ONCE = 8;

type Endpoints = Pick<CreateAuthProviderDto, 'issuer' | 'authorizationUrl' | 'tokenUrl' | 'revocationUrl'>;

// The tenant's auth providers: where its tools get people's tokens from. The client secret is sealed at rest
// and never answered; the endpoints are given, or read from the issuer's discovery document, under the
// fetch_url address policy either way.
@Injectable()
export class AuthProvidersService {
  readonly client: ProviderClient;
  readonly redirectUri: string | null;
  private readonly allowHosts: readonly string[];
  private readonly logger = new Logger('AuthProviders');

  constructor(
    private readonly providers: AuthProvidersRepository,
    private readonly connections: ConnectionsRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.allowHosts = config.tools.fetch.allowHosts;
    this.client = new ProviderClient(this.allowHosts);
    this.redirectUri = config.oauth.publicUrl === null ? null : `${config.oauth.publicUrl.replace(/\/+$/, '')}${CALLBACK_PATH}`;
  }

  async create(tenantId: string, dto: CreateAuthProviderDto): Promise<AuthProviderResponseDto> {
    this.refuseOwnClientId(dto.clientId);
    const { metadata, discovered } = await this.endpoints(dto, dto.clientId);
    await this.refuseAnotherTenantsClient(tenantId, dto.clientId, metadata);
    const fields: ProviderFields = {
      slug: dto.slug,
      name: dto.name,
      metadata,
      discovered,
      clientId: dto.clientId,
      clientSecret: dto.clientSecret,
      scopes: unique(dto.scopes ?? []),
      apiHosts: apiHostsOf(dto.apiHosts),
      verifyUrl: dto.verifyUrl === undefined ? null : verifyUrlOf(dto.verifyUrl),
    };
    const created = await this.providers.create(tenantId, fields);
    if (created === UNIQUE_TAKEN) throw providerSlugTaken(dto.slug);
    if (created === TOO_MANY) throw tooManyProviders(MAX_AUTH_PROVIDERS);
    return this.shown(created);
  }

  async list(tenantId: string): Promise<AuthProviderListResponseDto> {
    return { items: (await this.providers.list(tenantId)).map((p) => this.shown(p)) };
  }

  async get(tenantId: string, id: string): Promise<AuthProviderResponseDto> {
    return this.shown(await this.find(tenantId, id));
  }

  async update(tenantId: string, id: string, dto: UpdateAuthProviderDto): Promise<AuthProviderResponseDto> {
    const current = await this.find(tenantId, id);
    if (dto.clientId !== undefined) this.refuseOwnClientId(dto.clientId);
    const clientId = dto.clientId ?? current.clientId;
    const endpointsGiven =
      dto.issuer !== undefined || dto.authorizationUrl !== undefined || dto.tokenUrl !== undefined || dto.revocationUrl !== undefined;
    let { metadata, discovered } = current;
    if (endpointsGiven) {
      // A new issuer alone is discovered again; endpoints given replace the ones they name.
      const rediscover = dto.issuer !== undefined && dto.authorizationUrl === undefined && dto.tokenUrl === undefined;
      const given: Endpoints = rediscover
        ? { issuer: dto.issuer }
        : {
            issuer: dto.issuer ?? (current.discovered ? undefined : current.metadata.issuer),
            authorizationUrl: dto.authorizationUrl ?? current.metadata.authorization_endpoint,
            tokenUrl: dto.tokenUrl ?? current.metadata.token_endpoint,
            revocationUrl: dto.revocationUrl ?? current.metadata.revocation_endpoint,
          };
      ({ metadata, discovered } = await this.endpoints(given, clientId));
    }
    if (endpointsGiven || dto.clientId !== undefined) await this.refuseAnotherTenantsClient(tenantId, clientId, metadata);
    // Where tokens and the client secret go, or whose client this is, changed: the stored secret is not sent to
    // the new server unless the admin gives it again (the secret is write-only: a changed endpoint must not
    // read it back), and the connections made at the old one end, their tokens never sent to the new one.
    const serverChanged =
      metadata.token_endpoint !== current.metadata.token_endpoint ||
      metadata.issuer !== current.metadata.issuer ||
      clientId !== current.clientId;
    if (serverChanged && dto.clientSecret === undefined) {
      throw invalidProvider(
        'changing its issuer, tokenUrl or clientId needs clientSecret again: the stored secret is never sent to another server',
      );
    }
    const updated = await this.providers.update(tenantId, id, {
      name: dto.name ?? current.name,
      metadata,
      discovered,
      clientId,
      clientSecret: dto.clientSecret ?? current.clientSecret,
      scopes: dto.scopes ? unique(dto.scopes) : current.scopes,
      apiHosts: dto.apiHosts ? apiHostsOf(dto.apiHosts) : current.apiHosts,
      verifyUrl: dto.verifyUrl === undefined ? current.verifyUrl : dto.verifyUrl === null ? null : verifyUrlOf(dto.verifyUrl),
    });
    if (!updated) throw providerNotFound(id);
    if (serverChanged) await this.connections.revokeAllOf(tenantId, id);
    return this.shown(updated);
  }

  // Its connections go with it, here at once; their tokens are then revoked at the provider when it has a
  // revocation endpoint (a few at a time; a failure is logged: Toolgate holds the tokens no more).
  async delete(tenantId: string, id: string): Promise<void> {
    const provider = await this.providers.findById(tenantId, id);
    const held = provider?.metadata.revocation_endpoint ? await this.connections.listWithTokens(tenantId, id) : [];
    if (!(await this.providers.delete(tenantId, id))) throw providerNotFound(id);
    if (!provider) return;
    const credentials = { metadata: provider.metadata, clientId: provider.clientId, clientSecret: provider.clientSecret };
    for (let i = 0; i < held.length; i += REVOKE_AT_ONCE) {
      await Promise.all(
        held.slice(i, i + REVOKE_AT_ONCE).map((connection) =>
          this.client.revokeTokens(credentials, connection, (error) => {
            this.logger.warn(
              `connection ${connection.id}: revocation at ${provider.slug} failed: ${error instanceof Error ? error.message.slice(0, 300) : 'unknown error'}`,
            );
          }),
        ),
      );
    }
  }

  async find(tenantId: string, id: string): Promise<ProviderRecord> {
    const provider = await this.providers.findById(tenantId, id);
    if (!provider) throw providerNotFound(id);
    return provider;
  }

  async findBySlug(tenantId: string, slug: string): Promise<ProviderRecord> {
    const provider = await this.providers.findBySlug(tenantId, slug);
    if (!provider) throw providerNotFound(slug);
    return provider;
  }

  private async endpoints(given: Endpoints, clientId: string): Promise<{ metadata: ProviderMetadata; discovered: boolean }> {
    if (given.authorizationUrl === undefined && given.tokenUrl === undefined) {
      if (given.issuer === undefined)
        throw invalidProvider('give an issuer (its endpoints are discovered), or authorizationUrl and tokenUrl');
      const issuer = await this.checkUrl('issuer', given.issuer);
      let metadata: ProviderMetadata;
      try {
        metadata = await this.client.discover(issuer, clientId);
      } catch (error) {
        const refusal = policyRefusal(error);
        if (refusal) throw refusal;
        throw discoveryFailed(issuer, error instanceof Error ? error.message : String(error));
      }
      // The endpoints a document names are judged like endpoints given by hand: a public issuer cannot point
      // Toolgate's token requests at a private, loopback or metadata address.
      await this.checkUrl('the discovery document’s authorization_endpoint', metadata.authorization_endpoint);
      const mixUp = endpointsMixedUp(metadata, true);
      if (mixUp) throw invalidProvider(mixUp);
      await this.checkUrl('the discovery document’s token_endpoint', metadata.token_endpoint);
      if (metadata.revocation_endpoint !== undefined)
        await this.checkUrl('the discovery document’s revocation_endpoint', metadata.revocation_endpoint);
      return { metadata, discovered: true };
    }
    if (given.authorizationUrl === undefined || given.tokenUrl === undefined)
      throw invalidProvider('authorizationUrl and tokenUrl go together');
    const authorization = await this.checkUrl('authorizationUrl', given.authorizationUrl);
    const token = await this.checkUrl('tokenUrl', given.tokenUrl);
    const revocation = given.revocationUrl === undefined ? undefined : await this.checkUrl('revocationUrl', given.revocationUrl);
    // Without an issuer, the authorization server is named by its authorization endpoint's origin (an answer
    // that names another issuer is refused, RFC 9207).
    const issuer = given.issuer === undefined ? new URL(authorization).origin : await this.checkUrl('issuer', given.issuer);
    const metadata: ProviderMetadata = {
      issuer,
      authorization_endpoint: authorization,
      token_endpoint: token,
      ...(revocation && { revocation_endpoint: revocation }),
    };
    const mixUp = endpointsMixedUp(metadata, false);
    if (mixUp) throw invalidProvider(mixUp);
    return { metadata, discovered: false };
  }

  // Toolgate's own client ID metadata documents (discovered MCP sources sign in with them) are one client at
  // every authorization server that takes them, shared by all tenants: a provider made by hand may not claim
  // one, or the codes people bring back for that client could be taken to another tenant's provider.
  private refuseOwnClientId(clientId: string): void {
    if (this.redirectUri === null || !URL.canParse(clientId)) return;
    if (new URL(clientId).origin === new URL(this.redirectUri).origin)
      throw invalidProvider(
        'clientId names a client of Toolgate itself (a URL of PUBLIC_URL): give the client ID the provider issued to you',
      );
  }

  // A client ID is one application's at its authorization server. Two tenants naming the same one there would
  // share one redirect URI (Toolgate's callback) under one name on the consent page: a person sent another
  // tenant's link would consent to the first tenant's application and land in the other's. So a client ID
  // another tenant has at the same sign-in origin is refused.
  private async refuseAnotherTenantsClient(tenantId: string, clientId: string, metadata: ProviderMetadata): Promise<void> {
    if (metadata.authorization_endpoint === undefined) return;
    const signIn = new URL(metadata.authorization_endpoint).origin;
    const elsewhere = await this.providers.signInEndpointsOfClientElsewhere(tenantId, clientId);
    if (elsewhere.some((url) => URL.canParse(url) && new URL(url).origin === signIn)) throw clientIdTaken(signIn);
  }

  // https, or http to a host the operator opened in FETCH_ALLOW_HOSTS; judged now by the address policy too.
  private async checkUrl(field: string, raw: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw invalidProvider(`${field} is not an absolute URL`);
    }
    if (url.protocol !== 'https:' && !insecureAllowed(url, this.allowHosts))
      throw invalidProvider(`${field} must be https (http only for a host opened in FETCH_ALLOW_HOSTS)`);
    if (url.hash !== '' || url.username !== '' || url.password !== '')
      throw invalidProvider(`${field} may have no fragment and no credentials`);
    try {
      await checkEndpoint(url.href, { allowHosts: this.allowHosts });
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw invalidProvider(`${field}: ${String(error)}`);
    }
    return field === 'issuer' ? raw : url.href;
  }

  private shown(p: ProviderRecord): AuthProviderResponseDto {
    return {
      id: p.id,
      slug: p.slug,
      name: p.name,
      issuer: p.metadata.issuer,
      authorizationUrl: p.metadata.authorization_endpoint,
      tokenUrl: p.metadata.token_endpoint,
      revocationUrl: p.metadata.revocation_endpoint ?? null,
      discovered: p.discovered,
      clientId: p.clientId,
      scopes: p.scopes,
      apiHosts: p.apiHosts,
      verifyUrl: p.verifyUrl,
      redirectUri: this.redirectUri,
      createdAt: p.createdAt.toISOString(),
      updatedAt: p.updatedAt.toISOString(),
    };
  }
}

const unique = (values: string[]) => [...new Set(values)];

// The tenant's own page, reached by the person's browser (never fetched by Toolgate): http or https, no
// credentials, no fragment (the flow id goes in its query).
function verifyUrlOf(raw: string): string {
  if (!isWebUrl(raw)) throw invalidProvider('verifyUrl must be an absolute http or https URL without credentials');
  const url = new URL(raw);
  if (url.hash !== '') throw invalidProvider('verifyUrl may have no fragment');
  if (url.searchParams.has('flow')) throw invalidProvider('verifyUrl may not carry its own flow parameter');
  return url.href;
}

export function isWebUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

// As URLs name them: lower case, without a trailing dot.
function apiHostsOf(hosts: string[]): string[] {
  return unique(hosts.map((host) => host.toLowerCase().replace(/\.(?=:|$)/, '')));
}

// Where people sign in and where the code they bring back is sent must be one server's: otherwise a provider
// (another tenant's, made for it) could have them sign in at a real server and collect the code and PKCE
// verifier at its own token endpoint (a mix-up). A discovery document vouches for the endpoints it names, but
// only as its issuer's: its authorization endpoint must be on the issuer's origin (the token endpoint may be
// elsewhere, as some providers keep it). Endpoints given by hand are vouched for by nobody: all on the
// authorization endpoint's origin, and an issuer given with them too. Null when they agree.
export function endpointsMixedUp(
  metadata: { issuer: string; authorization_endpoint?: string; token_endpoint?: string; revocation_endpoint?: string },
  discovered: boolean,
): string | null {
  if (metadata.authorization_endpoint === undefined) return null;
  const signIn = new URL(metadata.authorization_endpoint).origin;
  if (discovered) {
    const issuer = new URL(metadata.issuer).origin;
    return signIn === issuer
      ? null
      : `the discovery document of ${issuer} names an authorization_endpoint on another origin (${signIn}); Toolgate only sends people to sign in at the issuer that answers for the code`;
  }
  const named: Array<[string, string | undefined]> = [
    ['tokenUrl', metadata.token_endpoint],
    ['revocationUrl', metadata.revocation_endpoint],
    ['issuer', metadata.issuer],
  ];
  const off = named.find(([, url]) => url !== undefined && new URL(url).origin !== signIn);
  return off
    ? `${off[0]} must be on the origin of authorizationUrl (${signIn}): the code people bring back from signing in is sent only to the server they signed in at. For a provider whose endpoints are on several hosts, give its issuer alone and they are read from its discovery document`
    : null;
}
