import { Inject, Injectable, Logger } from '@nestjs/common';
import { busTopic, ChangeBus } from '../common/bus/change-bus.js';
import { Metrics } from '../metrics/metrics.js';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { Tenant } from '../common/auth/auth.decorators.js';
import { type ApiKeyListResponseDto, ApiKeyResponseDto, type CreatedApiKeyResponseDto } from './dto/tenant.dto.js';
import { generateApiKey, hashesEqual, parseApiKeyPrefix } from './api-key-format.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { apiKeyNotFound } from './tenants.errors.js';

interface CachedKey extends Tenant {
  hash: Uint8Array;
  lastTouchedAt: number;
}

// The key's prefix (the public part that finds the row), never the secret; or every key of a deleted tenant.
type ApiKeysChanged = { revokedPrefix: string } | { tenantId: string };
const API_KEYS_CHANGED = busTopic<ApiKeysChanged>('api-keys.changed');

// last_used_at is written at most this often per key, so authentication stays off the database.
const LAST_USED_RESOLUTION_MS = 60_000;

@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger('ApiKeys');
  private readonly cache: TtlLruCache<string, CachedKey>;

  constructor(
    private readonly keys: ApiKeysRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    metrics: Metrics,
    private readonly bus: ChangeBus,
  ) {
    this.cache = new TtlLruCache(config.apiKeyCacheTtlMs, 10_000);
    metrics.cache('api_keys', this.cache);
    bus.subscribe(API_KEYS_CHANGED, (change) => {
      if ('revokedPrefix' in change) this.cache.delete(change.revokedPrefix);
      else this.cache.deleteWhere((entry) => entry.tenantId === change.tenantId);
    });
    bus.onResync(() => this.cache.clear());
  }

  // The full key is in this answer only: the database keeps its hash.
  async issue(tenantId: string, name: string): Promise<CreatedApiKeyResponseDto> {
    const generated = generateApiKey();
    const record = await this.keys.create(tenantId, name, generated.prefix, generated.hash);
    return { ...ApiKeyResponseDto.from(record), key: generated.key, tenantId };
  }

  async list(tenantId: string): Promise<ApiKeyListResponseDto> {
    return { items: (await this.keys.listForTenant(tenantId)).map((k) => ApiKeyResponseDto.from(k)) };
  }

  async revoke(tenantId: string, keyId: string): Promise<void> {
    const prefix = await this.keys.revoke(tenantId, keyId);
    if (prefix === null) throw apiKeyNotFound(keyId);
    this.bus.publish(API_KEYS_CHANGED, { revokedPrefix: prefix });
  }

  forgetTenant(tenantId: string): void {
    this.bus.publish(API_KEYS_CHANGED, { tenantId });
  }

  // `keyHash` is hashApiKey(key): the guard hashes each token once, for this and for the admin check.
  async authenticate(key: string, keyHash: Uint8Array): Promise<Tenant | null> {
    const prefix = parseApiKeyPrefix(key);
    if (prefix === null) return null;
    let entry = this.cache.get(prefix);
    if (!entry) {
      const record = await this.keys.findActiveByPrefix(prefix);
      if (!record) return null;
      entry = { tenantId: record.tenantId, apiKeyId: record.id, hash: record.keyHash, lastTouchedAt: 0 };
    }
    if (!hashesEqual(keyHash, entry.hash)) return null;
    this.cache.set(prefix, entry);
    this.touch(entry);
    return { tenantId: entry.tenantId, apiKeyId: entry.apiKeyId };
  }

  private touch(entry: CachedKey): void {
    const now = Date.now();
    if (now - entry.lastTouchedAt < LAST_USED_RESOLUTION_MS) return;
    entry.lastTouchedAt = now;
    this.keys.touchLastUsed(entry.apiKeyId, new Date(now)).catch((error: unknown) => {
      this.logger.warn(`could not record last use of key ${entry.apiKeyId}: ${String(error)}`);
    });
  }
}
