import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { Tenant } from '../common/auth/auth.decorators.js';
import { TenantRateLimiter } from './tenant-rate-limiter.js';

// Every tenant request counts in the `requests` bucket. Runs after AuthGuard (it needs the tenant); the
// `commands` bucket is charged where the tool is known (tools/tool-call.gate.ts), not here.
@Injectable()
export class TenantRateLimitGuard implements CanActivate {
  constructor(private readonly limiter: TenantRateLimiter) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const tenant = context.switchToHttp().getRequest<{ tenant?: Tenant }>().tenant;
    if (tenant) await this.limiter.chargeRequest(tenant.tenantId);
    return true;
  }
}
