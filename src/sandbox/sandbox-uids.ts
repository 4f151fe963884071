import { Inject, Injectable } from '@nestjs/common';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { RunAs } from '../execution/process/sandbox/sandbox-spec.js';
import { tenantNotFound } from '../tenants/tenants.errors.js';
import { SandboxUidsRepository } from './sandbox-uids.repository.js';
import { sandboxUidsExhausted } from './sandbox.errors.js';

const CACHE_ENTRIES = 100_000;

// Which uid a tenant's commands run as. Kernel limits counted per real uid (inotify instances and watches,
// RLIMIT_NPROC, user namespaces, SysV IPC keyed to it, POSIX message queues) are not changed by a uid
// map inside a user namespace: they are charged to the uid bubblewrap started as. So under a root service
// each tenant gets a host uid of its own from SANDBOX_UID_RANGE, taken the first time it needs one, stored
// on its row (unique, so two instances never hand one uid to two tenants) and kept; its workspaces belong
// to it. The gid is the same number. An unprivileged service cannot switch uid: its commands run as itself,
// whichever tenant's (as with SANDBOX_UID_RANGE=off every tenant's run as SANDBOX_UID).
@Injectable()
export class SandboxUids {
  // A tenant's uid never changes while the range stays the same, which a restart alone can change.
  private readonly cache = new TtlLruCache<string, number>(Number.MAX_SAFE_INTEGER, CACHE_ENTRIES);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: SandboxUidsRepository,
  ) {}

  // Whether tenants get uids of their own here.
  get perTenant(): boolean {
    return process.getuid?.() === 0 && this.config.tools.sandbox.uidRange !== null;
  }

  // What every tenant's commands run as when they do not: SANDBOX_UID under root, else the service itself.
  get shared(): RunAs | undefined {
    const { uid, gid } = this.config.tools.sandbox;
    return process.getuid?.() === 0 ? { uid, gid } : undefined;
  }

  // The uid and gid the tenant's commands run as (undefined: as the service itself).
  async forTenant(tenantId: string): Promise<RunAs | undefined> {
    if (!this.perTenant) return this.shared;
    const uid = this.cache.get(tenantId) ?? (await this.claim(tenantId));
    this.cache.set(tenantId, uid);
    return { uid, gid: uid };
  }

  // The uids a workspace directory of this tenant may belong to: the service's, the tenant's own, and
  // SANDBOX_UID (workspaces made before tenants had uids of their own, adopted on first use).
  async owners(tenantId: string): Promise<number[]> {
    const own = process.getuid?.() ?? 0;
    if (own !== 0) return [own];
    const tenant = await this.forTenant(tenantId);
    return [...new Set([0, this.config.tools.sandbox.uid, ...(tenant ? [tenant.uid] : [])])];
  }

  // Ends: a claim lost to another tenant means that tenant took the uid, so each turn round the loop either
  // returns, or sees one more uid of the range taken until none is free. A fixed number of attempts would
  // call the range exhausted when only many tenants asked at once.
  private async claim(tenantId: string): Promise<number> {
    const range = this.config.tools.sandbox.uidRange!;
    for (;;) {
      const held = await this.repository.uidOf(tenantId);
      if (held === undefined) throw tenantNotFound(tenantId);
      if (held !== null && held >= range.first && held <= range.last) return held;
      const free = await this.repository.freeUid(range);
      if (free === null) throw sandboxUidsExhausted(range);
      // Won, lost to another tenant, or this tenant's uid was taken by another instance: the next turn reads which.
      await this.repository.claim(tenantId, free, range);
    }
  }
}
