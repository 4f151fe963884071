import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiExtension,
  ApiForbiddenResponse,
  ApiSecurity,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { KeyRole } from './key-roles.js';
import { ErrorResponseDto } from '../errors/error-response.dto.js';

export const AUTH_KIND = 'toolgate:auth-kind';
export type AuthKind = 'public' | 'admin' | 'tenant';

export const TENANT_SECURITY = 'tenant-api-key';
export const ADMIN_SECURITY = 'admin-token';

// Routes are tenant routes unless they say otherwise: forgetting a decorator fails closed.
// The empty requirement says "no credentials" in the document (src/http/openapi.ts writes it as `security: []`);
// `why` goes beside it as `x-toolgate-public`, so a route without credentials says so on purpose.
export const Public = (why: string) =>
  applyDecorators(SetMetadata(AUTH_KIND, 'public' satisfies AuthKind), ApiSecurity({}), ApiExtension('x-toolgate-public', why));

export const AdminAuth = () =>
  applyDecorators(
    SetMetadata(AUTH_KIND, 'admin' satisfies AuthKind),
    ApiBearerAuth(ADMIN_SECURITY),
    ApiUnauthorizedResponse({ type: ErrorResponseDto, description: 'Missing or wrong admin token' }),
    ApiForbiddenResponse({ type: ErrorResponseDto, description: 'A tenant API key was sent to an admin route' }),
  );

export const TenantAuth = () =>
  applyDecorators(
    SetMetadata(AUTH_KIND, 'tenant' satisfies AuthKind),
    ApiBearerAuth(TENANT_SECURITY),
    ApiUnauthorizedResponse({ type: ErrorResponseDto, description: 'Missing, unknown, revoked or expired (api_key_expired) API key' }),
    ApiForbiddenResponse({
      type: ErrorResponseDto,
      description: "forbidden: the admin token was sent to a tenant route; forbidden_for_role: the key's role may not use this route",
    }),
    // TenantRateLimitGuard charges every tenant request.
    ApiTooManyRequestsResponse({ type: ErrorResponseDto, description: 'rate_limited, with Retry-After' }),
  );

// The authenticated tenant key: whose, which key, and what it may do.
export interface Tenant {
  tenantId: string;
  apiKeyId: string;
  keyName: string;
  role: KeyRole;
  // The projects the key is bound to; null: every project of the tenant.
  projectIds: readonly string[] | null;
  // The tools an agent key may list and call; null: every tool.
  tools: readonly string[] | null;
  // When the key stops working (a stream held open is closed then); null: never.
  expiresAt: Date | null;
  // The toolset (slug, in its one project) an agent key is bound to: only that toolset's routes; null or absent: none.
  toolset?: string | null;
  // An OAuth access token: the one resource (a project's MCP URL) it is accepted at. Absent: an API key.
  oauthResource?: string | null;
  // Every call of the key waits for a person's approval (an OAuth client signed in by an approver).
  parksEveryCall?: boolean;
  // The key may name the end user of its calls (Toolgate-User).
  actAsUsers?: boolean;
  // The end user this request names (Toolgate-User, checked by the guard); absent: none.
  user?: string;
}

export const ALLOWED_ROLES = 'toolgate:allowed-roles';

// The roles besides `admin` that may use a tenant route (admin always may; a route without this is
// admin-only). On a class, for every route of it; a handler's own list overrides it.
export const AllowRoles = (...roles: Exclude<KeyRole, 'admin'>[]) =>
  applyDecorators(
    SetMetadata(ALLOWED_ROLES, ['admin', ...roles] satisfies KeyRole[]),
    ApiExtension('x-toolgate-roles', ['admin', ...roles]),
  );

export const CurrentTenant = createParamDecorator((_: unknown, ctx: ExecutionContext): Tenant => {
  const tenant = ctx.switchToHttp().getRequest<{ tenant?: Tenant }>().tenant;
  if (!tenant) throw new Error('CurrentTenant used on a route without tenant authentication');
  return tenant;
});

export const PROJECT_PARAM = 'toolgate:project-param';

// A route of one project; `param` is the path parameter that holds the project's id. The guard answers a
// key bound to other projects there as if the project did not exist (404), and holds an OAuth token to
// the MCP endpoint of that project. Declared on the route (its handler, or its controller for all its
// routes), so what the guard checks never depends on what a parameter happens to be called; a route
// without it binds no project (test/architecture/project-scoped.spec.ts finds one that forgot it).
export const ProjectScoped = (param: string) => SetMetadata(PROJECT_PARAM, param);

export const TOOLSET_ROUTE = 'toolgate:toolset-route';

// A route that serves one toolset, whose slug is the path parameter `param`: the only routes a key bound
// to a toolset may use, for that toolset.
export const ToolsetRoute = (param: string) => SetMetadata(TOOLSET_ROUTE, param);
