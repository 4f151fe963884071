import { Inject, Injectable, Logger } from '@nestjs/common';
import { busTopic, ChangeBus } from '../common/bus/change-bus.js';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { ProjectChanges } from '../common/events/project-changes.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import { PoliciesRepository } from './policies.repository.js';
import { type PolicyCall, policyRequest, scopeOfCall } from './policy-request.js';
import { type CompiledPolicySet, compilePolicySet, decideScoped, type PolicyDecision, type PolicyScope } from './policy-set.js';

interface PoliciesChanged {
  tenantId: string;
  // Absent: the tenant's set changed, which every project of the tenant evaluates.
  projectId?: string;
}
const POLICIES_CHANGED = busTopic<PoliciesChanged>('policies.changed');

// No policy in force: the call is decided as it was before policies (approvalRequired only).
const NONE = 'none' as const;
type Entry = CompiledPolicySet | typeof NONE | Error;

const cacheKey = (tenantId: string, projectId: string) => `${tenantId}\n${projectId}`;

// The one decision before a call runs. A project's policies (its tenant's and its own) are read and compiled
// once per change and kept per project; a change on any instance drops them on every instance (the change
// bus), and the TTL bounds how long a change goes unseen while the bus is down.
@Injectable()
export class PolicyDecider {
  private readonly logger = new Logger('Policy');
  private readonly compiled: TtlLruCache<string, Entry>;

  constructor(
    private readonly repository: PoliciesRepository,
    private readonly bus: ChangeBus,
    changes: ProjectChanges,
    metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.compiled = new TtlLruCache(config.workspace.cacheTtlMs, config.workspace.cacheMaxEntries);
    metrics.cache('policies', this.compiled);
    const forget = ({ tenantId, projectId }: PoliciesChanged) => {
      if (projectId !== undefined) this.compiled.delete(cacheKey(tenantId, projectId));
      else this.compiled.deleteWhere((_entry, key) => key.startsWith(`${tenantId}\n`));
    };
    bus.subscribe(POLICIES_CHANGED, forget);
    changes.subscribe((tenantId, projectId) => forget({ tenantId, projectId }));
    bus.onResync(() => this.compiled.clear());
  }

  // Tells every instance (this one at once) that a policy set changed.
  changed(tenantId: string, projectId?: string): void {
    this.bus.publish(POLICIES_CHANGED, projectId === undefined ? { tenantId } : { tenantId, projectId });
  }

  // null: no policy is in force for the project. A set that cannot be compiled forbids every call.
  async decide(tenantId: string, call: PolicyCall): Promise<PolicyDecision | null> {
    const set = await this.setFor(tenantId, call.projectId);
    if (set === NONE) return null;
    if (set instanceof Error)
      return {
        effect: 'forbid',
        policies: [
          { id: 'toolgate.unusable', scope: 'tenant', reason: 'the policy set in force cannot be evaluated; an admin must set it again' },
        ],
      };
    try {
      // Only the policies whose scope can match the call are evaluated, on what they can read of it; none: no
      // request is built at all.
      return decideScoped(set, scopeOfCall(call), (reads) => policyRequest(call, reads));
    } catch (error) {
      this.logger.error(`a policy decision failed, the call is refused: ${String(error)}`);
      return {
        effect: 'forbid',
        policies: [{ id: 'toolgate.unusable', scope: 'tenant', reason: 'the call could not be judged by the policies in force' }],
      };
    }
  }

  private async setFor(tenantId: string, projectId: string): Promise<Entry> {
    const key = cacheKey(tenantId, projectId);
    const cached = this.compiled.get(key);
    if (cached !== undefined) return cached;
    const version = this.compiled.version;
    const [tenant, project] = await Promise.all([
      this.repository.findForTenant(tenantId),
      this.repository.findForProject(tenantId, projectId),
    ]);
    const sets: Array<{ scope: PolicyScope; text: string }> = [];
    // An empty set (cleared) is no policy: the calls are decided as before any was set.
    if (tenant && tenant.text.trim() !== '') sets.push({ scope: 'tenant', text: tenant.text });
    if (project && project.text.trim() !== '') sets.push({ scope: 'project', text: project.text });
    let entry: Entry = NONE;
    if (sets.length > 0) {
      try {
        entry = compilePolicySet(sets);
      } catch (error) {
        this.logger.error(`the policies of project ${projectId} cannot be compiled: ${String(error)}`);
        entry = error instanceof Error ? error : new Error(String(error));
      }
    }
    this.compiled.setIfUnchanged(version, key, entry);
    return entry;
  }
}
