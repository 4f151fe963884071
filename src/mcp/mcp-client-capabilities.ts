import { Inject, Injectable } from '@nestjs/common';
import { busTopic, ChangeBus } from '../common/bus/change-bus.js';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import { McpClientCapabilitiesRepository } from './mcp-client-capabilities.repository.js';
import type { KeyInProject } from './mcp-key-scope.js';

const CAPABILITIES_CHANGED = busTopic<KeyInProject>('mcp.client-capabilities');

const cacheKey = (owner: KeyInProject) => `${owner.tenantId}\n${owner.projectId}\n${owner.apiKeyId}`;

// Whether an MCP client declared URL-mode elicitation (capabilities.elicitation.url) at initialize, under
// the revisions that have one (up to 2025-11-25; 2026-07-28 sends its capabilities with every request). A
// stateless endpoint has no session to keep it in: it is the key's, in the project, kept in the database
// until the key's next initialize there (as the logging level is: mcp-log-levels.ts), cached, and dropped
// on every instance when it changes.
@Injectable()
export class McpClientCapabilities {
  private readonly declared: TtlLruCache<string, boolean>;

  constructor(
    private readonly repository: McpClientCapabilitiesRepository,
    private readonly bus: ChangeBus,
    metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.declared = new TtlLruCache(config.workspace.cacheTtlMs, config.workspace.cacheMaxEntries);
    metrics.cache('mcp_client_capabilities', this.declared);
    bus.subscribe(CAPABILITIES_CHANGED, (owner) => this.declared.delete(cacheKey(owner)));
    bus.onResync(() => this.declared.clear());
  }

  async urlElicitation(owner: KeyInProject): Promise<boolean> {
    const key = cacheKey(owner);
    const cached = this.declared.get(key);
    if (cached !== undefined) return cached;
    const version = this.declared.version;
    const declared = await this.repository.urlElicitation(owner);
    this.declared.setIfUnchanged(version, key, declared);
    return declared;
  }

  // At initialize: what this session's client declared. Nothing is written when it is what is kept already.
  async remember(owner: KeyInProject, urlElicitation: boolean): Promise<void> {
    if ((await this.urlElicitation(owner)) === urlElicitation) return;
    await this.repository.set(owner, urlElicitation);
    this.bus.publish(CAPABILITIES_CHANGED, owner);
    this.declared.set(cacheKey(owner), urlElicitation);
  }
}

// capabilities.elicitation.url, as a client declares it (an object; a client of 2025-06-18 declares
// `elicitation: {}`, which means form mode only).
export function declaresUrlElicitation(capabilities: unknown): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const elicitation = (capabilities as { elicitation?: unknown }).elicitation;
  if (typeof elicitation !== 'object' || elicitation === null) return false;
  const url = (elicitation as { url?: unknown }).url;
  return typeof url === 'object' && url !== null && !Array.isArray(url);
}
