import { Inject, Injectable, Logger } from '@nestjs/common';
import { busTopic, ChangeBus } from '../common/bus/change-bus.js';
import { Metrics } from '../metrics/metrics.js';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { Tenant } from '../common/auth/auth.decorators.js';
import type { KeyRole } from '../common/auth/key-roles.js';
import { type ApiKeyListResponseDto, ApiKeyResponseDto, type CreateApiKeyDto, type CreatedApiKeyResponseDto } from './dto/tenant.dto.js';
import { generateApiKey, hashApiKey, hashesEqual, parseApiKeyPrefix } from './api-key-format.js';
import { ApiKeysRepository, MAX_LIVE_API_KEYS, TOO_MANY_KEYS } from './api-keys.repository.js';
import type { KeyGrant } from './key-grant.js';
import { apiKeyNotFound, invalidGrant, tenantNotFound, tooManyApiKeys } from './tenants.errors.js';
import { ProjectAccess } from '../projects/project-access.js';
import { KeyRevocations } from '../common/auth/key-revocations.js';
import { mcpResourcePath } from '../common/auth/oauth-resource.js';
import { toolsetNotFound } from '../toolsets/toolsets.errors.js';

interface CachedKey extends Tenant {
  hash: Uint8Array;
  lastTouchedAt: number;
}

// The key's prefix (the public part that finds the row), never the secret; or every key of a deleted tenant.
type ApiKeysChanged = { revokedPrefix: string; keyId?: string } | { tenantId: string };
const API_KEYS_CHANGED = busTopic<ApiKeysChanged>('api-keys.changed');

// last_used_at is written at most this often per key, so authentication stays off the database.
const LAST_USED_RESOLUTION_MS = 60_000;
// A prefix no key has is remembered this long, so a flood of made-up keys of the right form stays off the
// database too (each was one query). Prefixes are random: a key issued later never has one seen before.
const UNKNOWN_PREFIX_TTL_MS = 30_000;
const UNKNOWN_PREFIXES_MAX = 10_000;
// Keys that passed, remembered by their hash longer than the cache keeps them (API_KEY_CACHE_TTL_MS, short so
// that revocations reach every instance), for one purpose only: while a client address is refused for its
// failed authentications, a key seen here lately is let on to the guard, which checks it as ever.
const PASSED_KEY_TTL_MS = 3_600_000;
const PASSED_KEYS_MAX = 20_000;

@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger('ApiKeys');
  private readonly cache: TtlLruCache<string, CachedKey>;
  private readonly unknownPrefixes: TtlLruCache<string, true>;
  private readonly passedKeys = new TtlLruCache<string, Uint8Array>(PASSED_KEY_TTL_MS, PASSED_KEYS_MAX);

  constructor(
    private readonly keys: ApiKeysRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    metrics: Metrics,
    private readonly bus: ChangeBus,
    private readonly projects: ProjectAccess,
    private readonly revocations: KeyRevocations,
  ) {
    this.cache = new TtlLruCache(config.apiKeyCacheTtlMs, 10_000);
    this.unknownPrefixes = new TtlLruCache(UNKNOWN_PREFIX_TTL_MS, UNKNOWN_PREFIXES_MAX);
    metrics.cache('api_keys', this.cache);
    bus.subscribe(API_KEYS_CHANGED, (change) => {
      if ('revokedPrefix' in change) {
        this.cache.delete(change.revokedPrefix);
        this.passedKeys.delete(change.revokedPrefix);
        if (change.keyId) this.revocations.ended({ apiKeyId: change.keyId });
      } else {
        this.cache.deleteWhere((entry) => entry.tenantId === change.tenantId);
        this.revocations.ended({ tenantId: change.tenantId });
      }
    });
    bus.onResync(() => this.cache.clear());
  }

  // A key as asked for in a POST …/api-keys body, after checking what it grants.
  async issueAsAsked(tenantId: string, dto: CreateApiKeyDto): Promise<CreatedApiKeyResponseDto> {
    return this.issue(tenantId, dto.name ?? 'default', await this.checkGrant(tenantId, dto));
  }

  private async checkGrant(tenantId: string, dto: CreateApiKeyDto): Promise<KeyGrant> {
    const role = dto.role ?? 'admin';
    const projectIds = [...new Set(dto.projectIds ?? [])];
    const tools = [...new Set(dto.tools ?? [])];
    if (role === 'agent' && projectIds.length === 0) throw invalidGrant('an agent key needs projectIds: the projects it works in');
    if (role === 'admin' && projectIds.length > 0)
      throw invalidGrant('an admin key is for the whole tenant; give projectIds to an agent or approver key');
    if (role !== 'agent' && tools.length > 0) throw invalidGrant('tools binds an agent key; other roles call no tools');
    const toolset = dto.toolset ?? null;
    if (toolset !== null && (role !== 'agent' || projectIds.length !== 1)) {
      throw invalidGrant('toolset binds an agent key to a toolset of its one project: give role "agent" and exactly one projectIds entry');
    }
    // Each project must be the tenant's: another tenant's id is named like a missing one.
    for (const projectId of projectIds) await this.projects.assertOwned(tenantId, projectId);
    if (toolset !== null && !(await this.keys.toolsetExists(tenantId, projectIds[0], toolset))) throw toolsetNotFound(toolset);
    let expiresAt: Date | null = null;
    if (dto.expiresAt !== undefined) {
      expiresAt = new Date(dto.expiresAt);
      if (!(expiresAt.getTime() > Date.now())) throw invalidGrant(`expiresAt ${dto.expiresAt} is not in the future`);
    }
    const actAsUsers = dto.actAsUsers === true;
    if (actAsUsers && role === 'approver') throw invalidGrant('actAsUsers is for keys that call tools: an admin or agent key');
    return { role, projectIds, tools, expiresAt, toolset, actAsUsers };
  }

  // The full key is in this answer only: the database keeps its hash. `grant` has been checked by the caller.
  // An API key counts against the tenant's MAX_LIVE_API_KEYS; an OAuth access token (grant.oauthGrantId)
  // is counted by its consent instead.
  async issue(
    tenantId: string,
    name: string,
    grant: KeyGrant = { role: 'admin', projectIds: [], tools: [], expiresAt: null, toolset: null },
  ): Promise<CreatedApiKeyResponseDto> {
    const generated = generateApiKey();
    const record =
      grant.oauthGrantId === undefined
        ? await this.keys.createCounted(tenantId, name, generated.prefix, generated.hash, grant)
        : await this.keys.create(tenantId, name, generated.prefix, generated.hash, grant);
    if (record === TOO_MANY_KEYS) throw tooManyApiKeys(MAX_LIVE_API_KEYS);
    if (record === false) throw tenantNotFound(tenantId);
    return { ...ApiKeyResponseDto.from(record), key: generated.key, tenantId };
  }

  async list(tenantId: string): Promise<ApiKeyListResponseDto> {
    return { items: (await this.keys.listForTenant(tenantId)).map((k) => ApiKeyResponseDto.from(k)) };
  }

  // An OAuth access token is revoked with the consent it came from: its refresh tokens and the other
  // access tokens of that consent stop working too, so revoking it in the key listing ends the client's access.
  // A person's key revoked ends the consents it gave.
  async revoke(tenantId: string, keyId: string): Promise<void> {
    const revoked = await this.keys.revoke(tenantId, keyId);
    if (revoked === null) throw apiKeyNotFound(keyId);
    if (revoked.oauthGrantId !== null) await this.revokeOAuthGrant(tenantId, revoked.oauthGrantId);
    this.bus.publish(API_KEYS_CHANGED, { revokedPrefix: revoked.prefix, keyId });
    // A client signed in with this key's consent acts on its authority: it ends with the key.
    for (const grantId of await this.keys.grantsConsentedBy(tenantId, keyId)) await this.revokeOAuthGrant(tenantId, grantId);
  }

  // Ends an OAuth consent: every access token issued under it stops at once (open MCP requests included).
  async revokeOAuthGrant(tenantId: string, grantId: string): Promise<void> {
    for (const key of await this.keys.revokeGrant(tenantId, grantId))
      this.bus.publish(API_KEYS_CHANGED, { revokedPrefix: key.prefix, keyId: key.id });
  }

  // Access tokens issued under a grant before this one are retired when it is refreshed: one listed token per consent.
  async retireOAuthAccessTokens(tenantId: string, grantId: string, keepKeyId: string): Promise<void> {
    for (const key of await this.keys.revokeGrantKeysExcept(tenantId, grantId, keepKeyId)) {
      this.bus.publish(API_KEYS_CHANGED, { revokedPrefix: key.prefix, keyId: key.id });
    }
  }

  // A toolset deleted: the keys bound to it are revoked with it, so a toolset made later under the same slug
  // does not hand them whatever it serves, and so are the OAuth consents given for its MCP URL (their refresh
  // tokens would otherwise issue new ones). Answers how many keys were revoked.
  async revokeBoundToToolset(tenantId: string, projectId: string, slug: string): Promise<number> {
    const revoked = await this.keys.revokeBoundToToolset(tenantId, projectId, slug);
    for (const key of revoked) this.bus.publish(API_KEYS_CHANGED, { revokedPrefix: key.prefix, keyId: key.id });
    for (const grantId of await this.keys.grantsForResourcePath(tenantId, projectId, mcpResourcePath({ projectId, toolset: slug }))) {
      await this.revokeOAuthGrant(tenantId, grantId);
    }
    return revoked.length;
  }

  // Whether the project has a toolset of this slug (the project is the tenant's: checked before).
  toolsetExists(tenantId: string, projectId: string, slug: string): Promise<boolean> {
    return this.keys.toolsetExists(tenantId, projectId, slug);
  }

  forgetTenant(tenantId: string): void {
    this.bus.publish(API_KEYS_CHANGED, { tenantId });
  }

  // `keyHash` is hashApiKey(key): the guard hashes each token once, for this and for the admin check.
  // An expired key answers when it expired (a 401 that says so), only once the secret matched.
  async authenticate(key: string, keyHash: Uint8Array): Promise<Tenant | { expiredAt: Date } | null> {
    const prefix = parseApiKeyPrefix(key);
    if (prefix === null) return null;
    let entry = this.cache.get(prefix);
    if (!entry) {
      if (this.unknownPrefixes.get(prefix)) return null;
      const record = await this.keys.findActiveByPrefix(prefix);
      if (!record) {
        this.unknownPrefixes.set(prefix, true);
        return null;
      }
      entry = {
        tenantId: record.tenantId,
        apiKeyId: record.id,
        keyName: record.name,
        role: record.role as KeyRole,
        projectIds: record.projectIds.length > 0 ? record.projectIds : null,
        tools: record.tools.length > 0 ? record.tools : null,
        expiresAt: record.expiresAt,
        toolset: record.toolset,
        oauthResource: record.oauthResource,
        parksEveryCall: record.parksEveryCall,
        actAsUsers: record.actAsUsers,
        hash: record.keyHash,
        lastTouchedAt: 0,
      };
    }
    if (!hashesEqual(keyHash, entry.hash)) return null;
    if (entry.expiresAt !== null && entry.expiresAt.getTime() <= Date.now()) return { expiredAt: entry.expiresAt };
    this.cache.set(prefix, entry);
    this.passedKeys.set(prefix, entry.hash);
    this.touch(entry);
    const { tenantId, apiKeyId, keyName, role, projectIds, tools, expiresAt, toolset, oauthResource, parksEveryCall, actAsUsers } = entry;
    return { tenantId, apiKeyId, keyName, role, projectIds, tools, expiresAt, toolset, oauthResource, parksEveryCall, actAsUsers };
  }

  // Whether authenticating the key would query the database: it has the form of a key, and its prefix is
  // neither cached nor remembered as nobody's (a new key's first use here, or a made-up one).
  wouldQuery(key: string): boolean {
    const prefix = parseApiKeyPrefix(key);
    return prefix !== null && !this.cache.holds(prefix) && !this.unknownPrefixes.holds(prefix);
  }

  // Whether the key passed here within the hour (not a check of the key: the guard makes that), from memory
  // alone: what lets a tenant's client on while its address is refused for others' failed authentications.
  passedLately(key: string): boolean {
    const prefix = parseApiKeyPrefix(key);
    const hash = prefix === null ? undefined : this.passedKeys.get(prefix);
    return hash !== undefined && hashesEqual(hashApiKey(key), hash);
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
