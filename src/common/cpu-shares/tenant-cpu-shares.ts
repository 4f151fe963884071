import { Global, Inject, Injectable, Logger, Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { readCgroupSources } from '../cgroups/own-cgroup.js';
import { TenantCpuGroups } from './tenant-cpu-groups.js';

// Whether tenants share the CPU by cgroup here (TENANT_CPU_GROUPS), decided once at start-up: the worker
// pool places each task's thread, and the command sandbox each command, in its tenant's group.
@Injectable()
export class TenantCpuShares {
  private readonly logger = new Logger('CpuShares');
  private readonly groups: TenantCpuGroups | undefined;
  // Where the groups are, or why there are none (the start-up log says it).
  readonly detail: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const prepared =
      config.workerPool.tenantCpuGroups === 'off'
        ? { reason: 'TENANT_CPU_GROUPS=off' }
        : (() => {
            try {
              return TenantCpuGroups.prepare(readCgroupSources());
            } catch (err) {
              return { reason: `the service's cgroups cannot be read (${(err as Error).message})` };
            }
          })();
    if ('reason' in prepared) {
      this.detail = prepared.reason;
      this.logger.warn(`Tenants share the CPU as processes do, not as tenants: ${prepared.reason}`);
      return;
    }
    this.groups = prepared;
    this.detail = `cgroup v1 ${prepared.parent}`;
    this.logger.log(
      `Each tenant's commands and worker-pool tasks share the CPU as one cgroup (under ${prepared.parent}, ${prepared.yielding === 'idle' ? 'an idle group' : 'weighing least'}: they use the CPU the service's own threads leave)`,
    );
  }

  get enabled(): boolean {
    return this.groups !== undefined;
  }

  // The group a pool task of this key runs in: its tenant's, or the service's own for urgent work that
  // others wait on (a quota measurement) and work of no tenant. Undefined where there are no groups.
  threadGroup = (key: string, urgent: boolean): string | undefined => {
    if (!this.groups) return undefined;
    if (urgent || key === '') return this.groups.home;
    try {
      return this.groups.groupOf(key) ?? this.groups.home;
    } catch {
      return this.groups.home;
    }
  };

  // The group a tenant's commands start in (handed to the runner with the sandbox, see
  // attachToCpuGroup); undefined where there are no groups, or where the tenant's cannot be made (the
  // command then runs where the service is, and the log says why).
  commandGroup(tenantId: string): string | undefined {
    try {
      return this.groups?.groupOf(tenantId);
    } catch (err) {
      this.logger.warn(`Tenant ${tenantId}'s cpu cgroup cannot be made (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
      return undefined;
    }
  }
}

@Global()
@Module({ providers: [TenantCpuShares], exports: [TenantCpuShares] })
export class TenantCpuSharesModule {}
