import { type CanActivate, type ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ALLOWED_ROLES, AUTH_KIND, type AuthKind, PROJECT_PARAM, type Tenant, TOOLSET_ROUTE } from '../common/auth/auth.decorators.js';
import { toolsetKeyRoute, toolsetNotFound } from '../toolsets/toolsets.errors.js';
import type { KeyRole } from '../common/auth/key-roles.js';
import { AppError } from '../common/errors/app-error.js';
import {
  EXTERNAL_TOKENS,
  type ExternalTokens,
  type McpResource,
  mcpResourceOfUrl,
  mcpResourceUrl,
  OAUTH_RESOURCE,
  resourceMetadataUrl,
  serviceBaseOf,
  serviceBaseUrl,
} from '../common/auth/oauth-resource.js';
import { projectNotFound } from '../projects/projects.errors.js';
import { END_USER_HEADER, invalidEndUser, parseEndUser, userAssertionNotAllowed } from '../common/auth/end-user.js';
import { requestContext } from '../common/logging/request-context.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { bearerToken, hashApiKey, hashesEqual } from './api-key-format.js';
import { ApiKeysService } from './api-keys.service.js';
import { type KeyCheck, keyCheckOf } from './key-checks.js';
import { FailedAuthentications } from '../rate-limit/failed-authentications.js';
import {
  adminRouteForbidden,
  apiKeyExpired,
  forbiddenForRole,
  invalidCredentials,
  missingCredentials,
  tenantRouteForbidden,
  tokenNotForThisResource,
} from './tenants.errors.js';

type GuardedRequest = {
  headers: Record<string, unknown>;
  params?: Record<string, string>;
  protocol?: string;
  socket?: { remoteAddress?: string };
  tenant?: Tenant;
};

// What a route declared about its callers (its decorators, the handler's over its controller's).
interface RouteAuth {
  kind: AuthKind;
  // An MCP endpoint that is an OAuth protected resource (its 401s name the metadata document).
  oauthResource: boolean;
  allowedRoles: readonly KeyRole[];
  // The path parameter that holds the route's project (@ProjectScoped); null: the route binds no project.
  projectParam: string | null;
  // A toolset's route: the path parameter that holds its slug (@ToolsetRoute), the only kind of route a
  // toolset-bound key may call; null: not a toolset's route.
  toolsetParam: string | null;
}

// One global guard: public routes pass, admin routes take ADMIN_TOKEN, every other route a tenant key.
// It lives with the API keys it checks; common/ keeps only the decorators routes declare themselves with.
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly adminTokenHash: Buffer | null;
  private readonly publicUrl: string | null;
  // Read once per route: the metadata never changes after start-up, and four reflector lookups on every
  // request were a few percent of the cheapest answers (a refused tool call).
  private readonly routes = new WeakMap<object, WeakMap<object, RouteAuth>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly apiKeys: ApiKeysService,
    private readonly failures: FailedAuthentications,
    @Inject(APP_CONFIG) config: AppConfig,
    @Optional() @Inject(EXTERNAL_TOKENS) private readonly externalTokens: ExternalTokens | null,
  ) {
    this.adminTokenHash = config.adminToken === null ? null : hashApiKey(config.adminToken);
    this.publicUrl = config.oauth.publicUrl;
  }

  // Every 401 counts against its client address (FailedAuthentications): past RATE_LIMIT_AUTH_FAILURES, the
  // address's requests without a key known here are refused before they reach a guard.
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const route = this.routeOf(context);
    if (route.kind === 'public') return true;
    const request = context.switchToHttp().getRequest<GuardedRequest>();
    try {
      return await this.authorize(route, request);
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 401) throw error;
      this.failures.record(request.socket?.remoteAddress);
      throw route.oauthResource ? this.challenged(error, route, request) : error;
    }
  }

  // A protected resource's 401 names its metadata document (RFC 9728, 5.1), where a client finds how to sign in.
  private challenged(error: AppError, route: RouteAuth, request: GuardedRequest): AppError {
    const endpoint = endpointOf(route, request);
    if (endpoint === null) return error;
    const base = serviceBaseUrl(this.publicUrl, request.headers, request.protocol);
    const invalid = error.code === 'invalid_token' ? 'error="invalid_token", ' : '';
    const challenge = `Bearer ${invalid}resource_metadata="${resourceMetadataUrl(base, endpoint)}"`;
    return new AppError(401, error.code, error.message, {
      details: error.details,
      headers: { ...error.headers, 'WWW-Authenticate': challenge },
    });
  }

  private routeOf(context: ExecutionContext): RouteAuth {
    const controller = context.getClass();
    const handler = context.getHandler();
    let handlers = this.routes.get(controller);
    if (handlers === undefined) this.routes.set(controller, (handlers = new WeakMap()));
    let route = handlers.get(handler);
    if (route === undefined) {
      const targets = [handler, controller];
      route = {
        kind: this.reflector.getAllAndOverride<AuthKind>(AUTH_KIND, targets) ?? 'tenant',
        oauthResource: this.reflector.getAllAndOverride<boolean>(OAUTH_RESOURCE, targets) === true,
        allowedRoles: this.reflector.getAllAndOverride<KeyRole[]>(ALLOWED_ROLES, targets) ?? ['admin'],
        projectParam: this.reflector.getAllAndOverride<string | undefined>(PROJECT_PARAM, targets) ?? null,
        toolsetParam: this.reflector.getAllAndOverride<string | undefined>(TOOLSET_ROUTE, targets) ?? null,
      };
      handlers.set(handler, route);
    }
    return route;
  }

  private async authorize(route: RouteAuth, request: GuardedRequest): Promise<boolean> {
    const kind = route.kind;
    const token = bearerToken(request.headers['authorization']);
    if (token === null) throw missingCredentials();

    // Hashed once: compared with the admin token's hash, then with the API key's stored hash.
    const tokenHash = hashApiKey(token);
    const isAdminToken = this.adminTokenHash !== null && hashesEqual(tokenHash, this.adminTokenHash);
    if (kind === 'admin') {
      if (isAdminToken) return true;
      if (await this.apiKey(request, token, tokenHash)) throw adminRouteForbidden();
      throw invalidCredentials();
    }
    if (isAdminToken) throw tenantRouteForbidden();
    const endpoint = route.oauthResource ? endpointOf(route, request) : null;
    const tenant = (await this.apiKey(request, token, tokenHash)) ?? (endpoint ? await this.external(token, request, endpoint) : null);
    if (!tenant) throw invalidCredentials();
    if ('expiredAt' in tenant) throw apiKeyExpired(tenant.expiredAt);
    // An OAuth access token works at the one MCP endpoint it was issued for, nowhere else (RFC 8707): a
    // project's token not at its toolsets' endpoints, a toolset's not at the project's or another toolset's.
    // It is bound to the issuer that minted it too: the base URL its resource starts with must be this
    // service's as the request reached it (another PUBLIC_URL or Host is another issuer).
    if (
      tenant.oauthResource &&
      (!sameEndpoint(mcpResourceOfUrl(tenant.oauthResource), endpoint) || !this.mintedHere(tenant.oauthResource, request))
    ) {
      throw tokenNotForThisResource(tenant.oauthResource);
    }
    // What the key's role may do, then where: a project outside the key's binding is a 404 like a missing one.
    const allowed = route.allowedRoles;
    if (!allowed.includes(tenant.role)) throw forbiddenForRole(tenant.role, allowed);
    const projectId = route.projectParam === null ? undefined : request.params?.[route.projectParam];
    if (tenant.projectIds !== null && projectId !== undefined && !tenant.projectIds.includes(projectId)) throw projectNotFound(projectId);
    // A key bound to a toolset serves that toolset only: another toolset is a 404 like a missing one.
    if (tenant.toolset) {
      if (route.toolsetParam === null) throw toolsetKeyRoute();
      const slug = request.params?.[route.toolsetParam] ?? '';
      if (slug !== tenant.toolset) throw toolsetNotFound(slug);
    }
    // The end user a call is for: only a key the admin trusted to say so may name one.
    const user = request.headers[END_USER_HEADER];
    if (user !== undefined) {
      if (tenant.actAsUsers !== true) throw userAssertionNotAllowed();
      // Sent twice, the header arrives as a list: one person per call.
      if (typeof user !== 'string') throw invalidEndUser('the header was sent more than once');
      tenant.user = parseEndUser(user);
    }
    request.tenant = tenant;
    const store = requestContext.getStore();
    if (store) store.tenantId = tenant.tenantId;
    return true;
  }

  // The key as the early check found it (http/early-refusals.ts), or looked up now.
  private apiKey(request: GuardedRequest, token: string, tokenHash: Buffer): Promise<KeyCheck> {
    const early = keyCheckOf(request, token);
    return early === undefined ? this.apiKeys.authenticate(token, tokenHash) : Promise.resolve(early);
  }

  // Whether an access token's resource names this service as the request reached it. A token of an external
  // issuer was judged for this very URL (its resource is built from it below).
  private mintedHere(resource: string, request: GuardedRequest): boolean {
    return serviceBaseOf(resource) === serviceBaseUrl(this.publicUrl, request.headers, request.protocol);
  }

  // A token of the external authorization server (OAUTH_ISSUER), judged for this endpoint's URL.
  private async external(token: string, request: GuardedRequest, endpoint: McpResource): Promise<Tenant | null> {
    if (!this.externalTokens) return null;
    const resource = mcpResourceUrl(serviceBaseUrl(this.publicUrl, request.headers, request.protocol), endpoint);
    return this.externalTokens.authenticate(token, resource, endpoint);
  }
}

// The MCP endpoint a protected resource's route serves: the project's, or a toolset's, as the route declares them.
function endpointOf(route: RouteAuth, request: GuardedRequest): McpResource | null {
  const projectId = route.projectParam === null ? undefined : request.params?.[route.projectParam];
  if (projectId === undefined) return null;
  return { projectId, toolset: route.toolsetParam === null ? null : (request.params?.[route.toolsetParam] ?? '') };
}

function sameEndpoint(a: McpResource | null, b: McpResource | null): boolean {
  return a !== null && b !== null && a.projectId === b.projectId && a.toolset === b.toolset;
}
