import { type CanActivate, type ExecutionContext, Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Tenant } from '../common/auth/auth.decorators.js';
import { AppError } from '../common/errors/app-error.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import { RATE_LIMIT_STORE, type RateLimitStore } from './rate-limit.tokens.js';

interface Bucket {
  name: string;
  limit: number;
}

// Limits are per tenant, not per IP: agents of many tenants share egress addresses, and one tenant's
// burst must not throttle another. Every tenant request counts in `requests`; calls that spawn a
// process (shell_exec, command skills) also count in the tighter `commands`. Runs after AuthGuard.
@Injectable()
export class TenantRateLimitGuard implements CanActivate, OnApplicationShutdown {
  private readonly requests: Bucket;
  private readonly commands: Bucket;
  private readonly windowMs: number;

  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    private readonly registry: ToolRegistry,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.requests = { name: 'requests', limit: config.rateLimit.requests };
    this.commands = { name: 'commands', limit: config.rateLimit.commandCalls };
    this.windowMs = config.rateLimit.windowMs;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<{ tenant?: Tenant; params: Record<string, string>; method: string }>();
    if (!req.tenant) return true;
    const buckets = [this.requests];
    if (await this.spawnsProcesses(req.tenant.tenantId, req)) buckets.push(this.commands);
    for (const bucket of buckets) {
      const { hits, resetInMs } = await this.store.hit(`${bucket.name}:${req.tenant.tenantId}`, this.windowMs);
      if (hits > bucket.limit) {
        const retryAfter = Math.max(1, Math.ceil(resetInMs / 1000));
        throw new AppError(
          429,
          'rate_limited',
          `Too many ${bucket.name === 'commands' ? 'command calls' : 'requests'} for this tenant: at most ${bucket.limit} per ${Math.round(this.windowMs / 1000)} s; retry after ${retryAfter} s`,
          undefined,
          undefined,
          { 'Retry-After': String(retryAfter) },
        );
      }
    }
    return true;
  }

  onApplicationShutdown(): Promise<void> {
    return this.store.close();
  }

  private async spawnsProcesses(tenantId: string, req: { params: Record<string, string>; method: string }): Promise<boolean> {
    const { projectId, toolName } = req.params;
    if (req.method !== 'POST' || !projectId || !toolName) return false;
    try {
      return (await this.registry.find(tenantId, projectId, toolName)).executor.spawnsProcesses === true;
    } catch {
      // Unknown project or tool: the call is refused further on anyway.
      return false;
    }
  }
}
