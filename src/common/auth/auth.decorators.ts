import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiSecurity, ApiTooManyRequestsResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorResponseDto } from '../errors/error-response.dto.js';

export const AUTH_KIND = 'toolgate:auth-kind';
export type AuthKind = 'public' | 'admin' | 'tenant';

export const TENANT_SECURITY = 'tenant-api-key';
export const ADMIN_SECURITY = 'admin-token';

// Routes are tenant routes unless they say otherwise: forgetting a decorator fails closed.
// The empty requirement says "no credentials" in the document (src/http/openapi.ts writes it as `security: []`).
export const Public = () => applyDecorators(SetMetadata(AUTH_KIND, 'public' satisfies AuthKind), ApiSecurity({}));

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
    ApiUnauthorizedResponse({ type: ErrorResponseDto, description: 'Missing, unknown or revoked API key' }),
    ApiForbiddenResponse({ type: ErrorResponseDto, description: 'The admin token was sent to a tenant route' }),
    // TenantRateLimitGuard charges every tenant request.
    ApiTooManyRequestsResponse({ type: ErrorResponseDto, description: 'rate_limited, with Retry-After' }),
  );

export interface Tenant {
  tenantId: string;
  apiKeyId: string;
}

export const CurrentTenant = createParamDecorator((_: unknown, ctx: ExecutionContext): Tenant => {
  const tenant = ctx.switchToHttp().getRequest<{ tenant?: Tenant }>().tenant;
  if (!tenant) throw new Error('CurrentTenant used on a route without tenant authentication');
  return tenant;
});
