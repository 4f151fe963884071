import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { checkEndpoint } from '../execution/net/endpoint-check.js';
import { UNIQUE_TAKEN } from '../database/unique-violation.js';
import { AuthProvidersRepository, type ProviderFields, type ProviderRecord } from './auth-providers.repository.js';
import { discoveryFailed, invalidProvider, providerNotFound, providerSlugTaken } from './connections.errors.js';
import type { AuthProviderListResponseDto, AuthProviderResponseDto, CreateAuthProviderDto, UpdateAuthProviderDto } from './dto/auth-provider.dto.js';
import { ProviderClient, type ProviderMetadata } from './provider-client.js';
import { insecureAllowed, policyRefusal } from './provider-fetch.js';

export const CALLBACK_PATH = '/v1/connections/callback';

type Endpoints = Pick<CreateAuthProviderDto, 'issuer' | 'authorizationUrl' | 'tokenUrl' | 'revocationUrl'>;

// The tenant's auth providers: where its tools get people's tokens from. The client secret is sealed at rest
// and never answered; the endpoints are given, or read from the issuer's discovery document, under the
// fetch_url address policy either way.
@Injectable()
export class AuthProvidersService {
  readonly client: ProviderClient;
  readonly redirectUri: string | null;
  private readonly allowHosts: readonly string[];

  constructor(
    private readonly providers: AuthProvidersRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.allowHosts = config.tools.fetch.allowHosts;
    this.client = new ProviderClient(this.allowHosts);
    this.redirectUri = config.oauth.publicUrl === null ? null : `${config.oauth.publicUrl.replace(/\/+$/, '')}${CALLBACK_PATH}`;
  }

  async create(tenantId: string, dto: CreateAuthProviderDto): Promise<AuthProviderResponseDto> {
    const { metadata, discovered } = await this.endpoints(dto, dto.clientId);
    const fields: ProviderFields = {
      slug: dto.slug,
      name: dto.name,
      metadata,
      discovered,
      clientId: dto.clientId,
      clientSecret: dto.clientSecret,
      scopes: unique(dto.scopes ?? []),
      apiHosts: apiHostsOf(dto.apiHosts),
    };
    const created = await this.providers.create(tenantId, fields);
    if (created === UNIQUE_TAKEN) throw providerSlugTaken(dto.slug);
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
    const clientId = dto.clientId ?? current.clientId;
    const endpointsGiven = dto.issuer !== undefined || dto.authorizationUrl !== undefined || dto.tokenUrl !== undefined || dto.revocationUrl !== undefined;
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
    const updated = await this.providers.update(tenantId, id, {
      name: dto.name ?? current.name,
      metadata,
      discovered,
      clientId,
      clientSecret: dto.clientSecret ?? current.clientSecret,
      scopes: dto.scopes ? unique(dto.scopes) : current.scopes,
      apiHosts: dto.apiHosts ? apiHostsOf(dto.apiHosts) : current.apiHosts,
    });
    if (!updated) throw providerNotFound(id);
    return this.shown(updated);
  }

  async delete(tenantId: string, id: string): Promise<void> {
    if (!(await this.providers.delete(tenantId, id))) throw providerNotFound(id);
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
      if (given.issuer === undefined) throw invalidProvider('give an issuer (its endpoints are discovered), or authorizationUrl and tokenUrl');
      const issuer = await this.checkUrl('issuer', given.issuer);
      try {
        return { metadata: await this.client.discover(issuer, clientId), discovered: true };
      } catch (error) {
        const refusal = policyRefusal(error);
        if (refusal) throw refusal;
        throw discoveryFailed(issuer, error instanceof Error ? error.message : String(error));
      }
    }
    if (given.authorizationUrl === undefined || given.tokenUrl === undefined) throw invalidProvider('authorizationUrl and tokenUrl go together');
    const authorization = await this.checkUrl('authorizationUrl', given.authorizationUrl);
    const token = await this.checkUrl('tokenUrl', given.tokenUrl);
    const revocation = given.revocationUrl === undefined ? undefined : await this.checkUrl('revocationUrl', given.revocationUrl);
    // Without an issuer, the authorization server is named by its authorization endpoint's origin (an answer
    // that names another issuer is refused, RFC 9207).
    const issuer = given.issuer === undefined ? new URL(authorization).origin : await this.checkUrl('issuer', given.issuer);
    const metadata: ProviderMetadata = { issuer, authorization_endpoint: authorization, token_endpoint: token, ...(revocation && { revocation_endpoint: revocation }) };
    return { metadata, discovered: false };
  }

  // https, or http to a host the operator opened in FETCH_ALLOW_HOSTS; judged now by the address policy too.
  private async checkUrl(field: string, raw: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw invalidProvider(`${field} is not an absolute URL`);
    }
    if (url.protocol !== 'https:' && !insecureAllowed(url, this.allowHosts)) throw invalidProvider(`${field} must be https (http only for a host opened in FETCH_ALLOW_HOSTS)`);
    if (url.hash !== '' || url.username !== '' || url.password !== '') throw invalidProvider(`${field} may have no fragment and no credentials`);
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
      redirectUri: this.redirectUri,
      createdAt: p.createdAt.toISOString(),
      updatedAt: p.updatedAt.toISOString(),
    };
  }
}

const unique = (values: string[]) => [...new Set(values)];

// As URLs name them: lower case, without a trailing dot.
function apiHostsOf(hosts: string[]): string[] {
  return unique(hosts.map((host) => host.toLowerCase().replace(/\.(?=:|$)/, '')));
}
