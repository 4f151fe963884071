import { Inject, Injectable, Logger } from '@nestjs/common';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { Tenant } from '../common/auth/auth.decorators.js';
import type { ApiKey } from '../generated/prisma/client.js';
import { generateApiKey, hashesEqual, parseApiKeyPrefix } from './api-key-format.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { apiKeyNotFound } from './tenants.errors.js';

interface CachedKey extends Tenant {
  hash: Uint8Array;
  lastTouchedAt: number;
}

// last_used_at is written at most this often per key, so authentication stays off the database.
const LAST_USED_RESOLUTION_MS = 60_000;

@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger('ApiKeys');
  private readonly cache: TtlLruCache<string, CachedKey>;

  constructor(
    private readonly keys: ApiKeysRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.cache = new TtlLruCache(config.apiKeyCacheTtlMs, 10_000);
  }

  async issue(tenantId: string, name: string): Promise<{ key: string; record: ApiKey }> {
    const generated = generateApiKey();
    const record = await this.keys.create(tenantId, name, generated.prefix, generated.hash);
    return { key: generated.key, record };
  }

  list(tenantId: string): Promise<ApiKey[]> {
    return this.keys.listForTenant(tenantId);
  }

  async revoke(tenantId: string, keyId: string): Promise<void> {
    const prefix = await this.keys.revoke(tenantId, keyId);
    if (prefix === null) throw apiKeyNotFound(keyId);
    this.cache.delete(prefix);
  }

  forgetTenant(tenantId: string): void {
    this.cache.deleteWhere((entry) => entry.tenantId === tenantId);
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
