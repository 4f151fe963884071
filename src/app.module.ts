import { type DynamicModule, Module, ValidationPipe } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AuthGuard } from './tenants/auth.guard.js';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter.js';
import { ChangeBusModule } from './common/bus/change-bus.module.js';
import { ProjectChangesModule } from './common/events/project-changes.module.js';
import { SecretsModule } from './common/secrets/secrets.module.js';
import { SchedulingModule } from './common/scheduling/scheduling.module.js';
import { WorkerPoolModule } from './app-worker-pool.module.js';
import { TenantCpuSharesModule } from './common/cpu-shares/tenant-cpu-shares.js';
import { AuditModule } from './audit/audit.module.js';
import { ToolsModule } from './tools/tools.module.js';
import { ToolRoutesModule } from './tools/routes/tool-routes.module.js';
import { SkillReviewModule } from './skills/review/skill-review.module.js';
import { McpModule } from './mcp/mcp.module.js';
import { ToolsetsModule } from './toolsets/toolsets.module.js';
import { PolicyModule } from './policy/policy.module.js';
import { CallsModule } from './calls/calls.module.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { ShutdownModule } from './shutdown/shutdown.module.js';
import { TenantRateLimitGuard } from './rate-limit/tenant-rate-limit.guard.js';
import { UnreadAnswersGuard } from './budgets/unread-answers.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthModule } from './health/health.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { TracingModule } from './tracing/tracing.module.js';
import { SandboxModule } from './sandbox/sandbox.module.js';
import { BudgetsModule } from './budgets/budgets.module.js';
import { ProjectsModule } from './projects/projects.module.js';
import { TenantsModule } from './tenants/tenants.module.js';
import { WorkspaceModule } from './workspace/workspace.module.js';
import { KeyRevocationsModule } from './common/auth/key-revocations.js';
import { OAuthModule } from './oauth/oauth.module.js';
import { ConnectionsModule } from './connections/connections.module.js';
import { ApprovalRoutesModule } from './approval-routes/approval-routes.module.js';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      // Routes are registered module by module in this order, and Express tries them one after another:
      // the calls an agent makes on every turn (REST invoke and batch, MCP) are first, so they do not pay a
      // match against every other route (about a tenth of a read_file's CPU on Express when they came 56th
      // and 32nd of 69). Fastify's router is a radix tree: the order costs it nothing.
      imports: [
        ConfigModule.forRoot(config),
        SchedulingModule,
        ToolRoutesModule,
        CallsModule,
        McpModule,
        MetricsModule,
        TracingModule,
        DatabaseModule,
        SecretsModule,
        TenantCpuSharesModule,
        WorkerPoolModule,
        SandboxModule,
        BudgetsModule,
        ChangeBusModule,
        KeyRevocationsModule,
        ProjectChangesModule,
        TenantsModule,
        ProjectsModule,
        WorkspaceModule,
        AuditModule,
        ToolsModule,
        SkillReviewModule,
        ToolsetsModule,
        PolicyModule,
        OAuthModule,
        ConnectionsModule,
        ApprovalRoutesModule,
        RateLimitModule,
        ShutdownModule,
        HealthModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        // In this order: who the tenant is, whether its clients left too much of its answers unread, then
        // whether it is over its rate limit.
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_GUARD, useExisting: UnreadAnswersGuard },
        { provide: APP_GUARD, useExisting: TenantRateLimitGuard },
        {
          provide: APP_PIPE,
          useValue: new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }),
        },
      ],
    };
  }
}
