import { Inject, Injectable } from '@nestjs/common';
import { busTopic, ChangeBus } from '../common/bus/change-bus.js';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { LogLevel } from '../execution/tool-logs.js';
import { Metrics } from '../metrics/metrics.js';
import { type LogLevelOwner, McpLogLevelsRepository } from './mcp-log-levels.repository.js';

const LOG_LEVEL_CHANGED = busTopic<LogLevelOwner>('mcp.log-level');

const cacheKey = (owner: LogLevelOwner) => `${owner.tenantId}\n${owner.projectId}\n${owner.apiKeyId}`;

// The level an MCP client set with logging/setLevel (revisions up to 2025-11-25). The protocol keeps it for
// the session; a stateless endpoint has none, so it is the key's, in the project it was set in, kept in the
// database (every instance serves the next POST) until the key's next initialize there (a new session
// starts without one) or the next setLevel. Every tools/call reads it, so it is cached (a key that set no
// level is cached too) and dropped on every instance when it changes (the change bus).
@Injectable()
export class McpLogLevels {
  private readonly levels: TtlLruCache<string, LogLevel | null>;

  constructor(
    private readonly repository: McpLogLevelsRepository,
    private readonly bus: ChangeBus,
    metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.levels = new TtlLruCache(config.workspace.cacheTtlMs, config.workspace.cacheMaxEntries);
    metrics.cache('mcp_log_levels', this.levels);
    bus.subscribe(LOG_LEVEL_CHANGED, (owner) => this.levels.delete(cacheKey(owner)));
    bus.onResync(() => this.levels.clear());
  }

  async of(owner: LogLevelOwner): Promise<LogLevel | null> {
    const key = cacheKey(owner);
    const cached = this.levels.get(key);
    if (cached !== undefined) return cached;
    const version = this.levels.version;
    const level = await this.repository.find(owner);
    this.levels.setIfUnchanged(version, key, level);
    return level;
  }

  async set(owner: LogLevelOwner, level: LogLevel): Promise<void> {
    await this.repository.set(owner, level);
    this.bus.publish(LOG_LEVEL_CHANGED, owner);
    this.levels.set(cacheKey(owner), level);
  }

  // At initialize: what an earlier session set no longer holds. Nothing is written when there is nothing
  // to clear (as this instance knows it).
  async reset(owner: LogLevelOwner): Promise<void> {
    if (this.levels.get(cacheKey(owner)) === null) return;
    await this.repository.clear(owner);
    this.bus.publish(LOG_LEVEL_CHANGED, owner);
    this.levels.set(cacheKey(owner), null);
  }
}
