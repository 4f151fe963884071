import { type CanActivate, type ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ALLOWED_ROLES, AUTH_KIND, type AuthKind, type Tenant, TOOLSET_ROUTE } from '../common/auth/auth.decorators.js';
import { toolsetKeyRoute, toolsetNotFound } from '../toolsets/toolsets.errors.js';
import type { KeyRole } from '../common/auth/key-roles.js';
import { AppError } from '../common/errors/app-error.js';
import { EXTERNAL_TOKENS, type ExternalTokens, mcpResourceUrl, OAUTH_RESOURCE, resourceMetadataUrl, serviceBaseUrl } from '../common/auth/oauth-resource.js';
import { projectNotFound } from '../projects/projects.errors.js';
import { requestContext } from '../common/logging/request-context.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { hashApiKey, hashesEqual } from './api-key-format.js';
import { ApiKeysService } from './api-keys.service.js';
import { adminRouteForbidden, apiKeyExpired, forbiddenForRole, invalidCredentials, missingCredentials, tenantRouteForbidden, tokenNotForThisResource } from './tenants.errors.js';

type GuardedRequest = { headers: Record<string, unknown>; params?: Record<string, string>; protocol?: string; tenant?: Tenant };

// One global guard: public routes pass, admin routes take ADMIN_TOKEN, every other route a tenant key.
// It lives with the API keys it checks; common/ keeps only the decorators routes declare themselves with.
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly adminTokenHash: Buffer | null;
  private readonly publicUrl: string | null;

  constructor(
    private readonly reflector: Reflector,
    private readonly apiKeys: ApiKeysService,
    @Inject(APP_CONFIG) config: AppConfig,
    @Optional() @Inject(EXTERNAL_TOKENS) private readonly externalTokens: ExternalTokens | null,
  ) {
    this.adminTokenHash = config.adminToken === null ? null : hashApiKey(config.adminToken);
    this.publicUrl = config.oauth.publicUrl;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const kind =
      this.reflector.getAllAndOverride<AuthKind>(AUTH_KIND, [context.getHandler(), context.getClass()]) ?? 'tenant';
    if (kind === 'public') return true;
    const request = context.switchToHttp().getRequest<GuardedRequest>();
    const oauthResource = this.reflector.getAllAndOverride<boolean>(OAUTH_RESOURCE, [context.getHandler(), context.getClass()]) === true;
    if (!oauthResource) return this.authorize(context, kind, request, false);
    // A protected resource's 401 names its metadata document (RFC 9728, 5.1), where a client finds how to sign in.
    try {
      return await this.authorize(context, kind, request, true);
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 401 || request.params?.projectId === undefined) throw error;
      const base = serviceBaseUrl(this.publicUrl, request.headers, request.protocol);
      const invalid = error.code === 'invalid_token' ? 'error="invalid_token", ' : '';
      const challenge = `Bearer ${invalid}resource_metadata="${resourceMetadataUrl(base, request.params.projectId)}"`;
      throw new AppError(401, error.code, error.message, { details: error.details, headers: { ...error.headers, 'WWW-Authenticate': challenge } });
    }
  }

  private async authorize(context: ExecutionContext, kind: AuthKind, request: GuardedRequest, oauthResource: boolean): Promise<boolean> {
    const token = bearerToken(request.headers['authorization']);
    if (token === null) throw missingCredentials();

    // Hashed once: compared with the admin token's hash, then with the API key's stored hash.
    const tokenHash = hashApiKey(token);
    const isAdminToken = this.adminTokenHash !== null && hashesEqual(tokenHash, this.adminTokenHash);
    if (kind === 'admin') {
      if (isAdminToken) return true;
      if (await this.apiKeys.authenticate(token, tokenHash)) throw adminRouteForbidden();
      throw invalidCredentials();
    }
    if (isAdminToken) throw tenantRouteForbidden();
    const tenant = (await this.apiKeys.authenticate(token, tokenHash)) ?? (oauthResource ? await this.external(token, request) : null);
    if (!tenant) throw invalidCredentials();
    if ('expiredAt' in tenant) throw apiKeyExpired(tenant.expiredAt);
    // An OAuth access token works at the one MCP endpoint it was issued for, nowhere else (RFC 8707).
    if (tenant.oauthResource && (!oauthResource || request.params?.projectId === undefined || tenant.projectIds?.[0] !== request.params.projectId)) {
      throw tokenNotForThisResource(tenant.oauthResource);
    }
    // What the key's role may do, then where: a project outside the key's binding is a 404 like a missing one.
    const allowed = this.reflector.getAllAndOverride<KeyRole[]>(ALLOWED_ROLES, [context.getHandler(), context.getClass()]) ?? ['admin'];
    if (!allowed.includes(tenant.role)) throw forbiddenForRole(tenant.role, allowed);
    const projectId = request.params?.projectId;
    if (tenant.projectIds !== null && projectId !== undefined && !tenant.projectIds.includes(projectId)) throw projectNotFound(projectId);
    // A key bound to a toolset serves that toolset only: another toolset is a 404 like a missing one.
    if (tenant.toolset) {
      if (this.reflector.getAllAndOverride<boolean>(TOOLSET_ROUTE, [context.getHandler(), context.getClass()]) !== true) throw toolsetKeyRoute();
      const slug = request.params?.slug ?? '';
      if (slug !== tenant.toolset) throw toolsetNotFound(slug);
    }
    request.tenant = tenant;
    const store = requestContext.getStore();
    if (store) store.tenantId = tenant.tenantId;
    return true;
  }

  // A token of the external authorization server (OAUTH_ISSUER), judged for this project's MCP URL.
  private async external(token: string, request: GuardedRequest): Promise<Tenant | null> {
    const projectId = request.params?.projectId;
    if (!this.externalTokens || projectId === undefined) return null;
    const resource = mcpResourceUrl(serviceBaseUrl(this.publicUrl, request.headers, request.protocol), projectId);
    return this.externalTokens.authenticate(token, resource, projectId);
  }
}

function bearerToken(header: unknown): string | null {
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}
