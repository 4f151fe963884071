import { chown, mkdir, realpath, rm, stat } from 'node:fs/promises';
import { Metrics } from '../metrics/metrics.js';
import path from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ChangeBus } from '../common/bus/change-bus.js';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { ProjectChanges } from '../common/events/project-changes.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { StaleTempSweeper } from './stale-temp-sweeper.js';
import { ProjectAccess } from '../projects/project-access.js';
import { workspaceDirectoryUnavailable, workspaceUnavailable } from './workspace.errors.js';
import { checkDirectory, isCanonicalAbsolute, walkWithoutSymlinks } from './fs/workspace-directory.js';
import { WorkspacePlacement } from './placement/workspace-placement.js';
import { SandboxUids } from '../sandbox/sandbox-uids.js';
import { adoptWorkspace } from './fs/workspace-adoption.js';

export type WorkspaceSource = 'database' | 'workspace_root' | 'cwd';

export interface ResolvedWorkspace {
  // Real path of the workspace directory: canonical, no symlink in it, checked on every resolution. Never
  // shown to a tenant (see WorkspaceController).
  path: string;
  source: WorkspaceSource;
}

// Finds a project's workspace directory: its workspace_path column, then WORKSPACE_ROOT/<projectId>,
// then the working directory. A stored path that is gone or no longer the accepted directory answers
// workspace_unavailable; it never falls through to another directory. ProjectAccess answers whether the project is the tenant's (and its
// workspace_path) from its cache; this cache keeps the directory checks (realpath, stat, mkdir) off the hot
// path. Updates and deletes of a project invalidate both.
@Injectable()
export class WorkspaceResolver {
  private readonly logger = new Logger('Workspace');
  private readonly cache: TtlLruCache<string, ResolvedWorkspace>;
  // Projects already warned about falling back to the working directory (bounded like the cache).
  private readonly warnedCwd: TtlLruCache<string, true>;
  private readonly warnedUnavailable: TtlLruCache<string, true>;

  constructor(
    private readonly projects: ProjectAccess,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    changes: ProjectChanges,
    private readonly sweeper: StaleTempSweeper,
    private readonly placement: WorkspacePlacement,
    metrics: Metrics,
    bus: ChangeBus,
    private readonly uids: SandboxUids,
  ) {
    changes.subscribe((tenantId, projectId) => this.invalidate(tenantId, projectId));
    const { cacheTtlMs, cacheMaxEntries } = config.workspace;
    this.cache = new TtlLruCache(cacheTtlMs, cacheMaxEntries);
    bus.onResync(() => this.cache.clear());
    this.warnedCwd = new TtlLruCache(Number.MAX_SAFE_INTEGER, cacheMaxEntries);
    this.warnedUnavailable = new TtlLruCache(Number.MAX_SAFE_INTEGER, cacheMaxEntries);
    metrics.cache('workspaces', this.cache);
  }

  async resolve(tenantId: string, projectId: string): Promise<ResolvedWorkspace> {
    // Read before the project's settings: a resolution that overlapped a change is answered but not cached.
    const version = this.cache.version;
    const { workspacePath } = await this.projects.settings(tenantId, projectId);
    const key = cacheKey(tenantId, projectId);
    const cached = this.cache.get(key);
    if (cached) {
      // Every call, warm or cold: the kernel must still find the accepted directory at the accepted path.
      const problem = checkDirectory(cached.path, cached.source === 'cwd' ? null : await this.uids.owners(tenantId));
      if (!problem) return cached;
      this.cache.delete(key);
      throw this.unavailable(projectId, problem.detail);
    }
    const resolved = await this.resolveUncached(tenantId, projectId, workspacePath);
    if (resolved.source !== 'cwd') await this.adopt(tenantId, projectId, resolved.path);
    this.warnedUnavailable.delete(projectId);
    this.cache.setIfUnchanged(version, key, resolved);
    this.sweeper.sweepOnce(resolved.path);
    return resolved;
  }

  invalidate(tenantId: string, projectId: string): void {
    this.cache.delete(cacheKey(tenantId, projectId));
  }

  // Called when a project is created: its directory under WORKSPACE_ROOT exists from the start.
  async provision(tenantId: string, projectId: string): Promise<void> {
    const root = this.config.workspace.root;
    if (root) await this.createWorkspaceDirectory(tenantId, root, projectId);
  }

  // Called when a project is deleted: the directory Toolgate made for it under WORKSPACE_ROOT goes too, or
  // every deleted project would leave its files (and its inodes) behind, outside any quota or budget. A
  // workspacePath the operator placed is the operator's and stays. rm removes symlinks, never their targets.
  async removeProvisioned(projectId: string): Promise<void> {
    const root = this.config.workspace.root;
    if (root) await rm(path.join(root, projectId), { recursive: true, force: true });
  }

  // WORKSPACE_ROOT may be entered but not listed by others (the sandbox's uid must pass through it);
  // a project's directory is private to the uid its tenant's commands run as, which a root service hands it to.
  private async createWorkspaceDirectory(tenantId: string, root: string, projectId: string): Promise<string> {
    await mkdir(root, { recursive: true, mode: 0o711 });
    const dir = path.join(root, projectId);
    if ((await mkdir(dir, { recursive: true, mode: 0o700 })) !== undefined && process.getuid?.() === 0) {
      const owner = await this.uids.forTenant(tenantId);
      if (owner) await chown(dir, owner.uid, owner.gid);
    }
    return dir;
  }

  // A workspace that still belongs to SANDBOX_UID (made before tenants had uids of their own, or placed
  // so by the operator) passes to the tenant's uid, whole, before anything of the tenant's runs there.
  // A directory owned by root stays as it is.
  private async adopt(tenantId: string, projectId: string, dir: string): Promise<void> {
    if (!this.uids.perTenant) return;
    const owner = await this.uids.forTenant(tenantId);
    const current = (await stat(dir)).uid;
    if (!owner || current === owner.uid || current === 0) return;
    const changed = await adoptWorkspace(dir, current, owner);
    this.logger.log(`project ${projectId}: its workspace passed from uid ${current} to its tenant's uid ${owner.uid} (${changed} entries)`);
  }

  private async resolveUncached(tenantId: string, projectId: string, workspacePath: string | null): Promise<ResolvedWorkspace> {
    const owners = await this.uids.owners(tenantId);
    if (workspacePath !== null) {
      // The stored path is checked again as if it were new (a row written before these rules, or a directory
      // changed since), then walked from its root without following a symlink.
      const lexical = isCanonicalAbsolute(workspacePath) ? this.placement.lexicalRoot(workspacePath) : { refused: 'not a canonical path' };
      const problem = 'refused' in lexical ? lexical.refused : walkWithoutSymlinks(lexical.root, workspacePath, owners)?.detail;
      if (problem) throw this.unavailable(projectId, problem);
      return { path: workspacePath, source: 'database' };
    }
    const root = this.config.workspace.root;
    if (root) {
      const dir = await this.createWorkspaceDirectory(tenantId, root, projectId);
      const real = path.join(await realpath(root), projectId);
      const problem = walkWithoutSymlinks(path.dirname(real), real, owners);
      if (problem) throw this.unavailable(projectId, `${dir}: ${problem.detail}`);
      return { path: real, source: 'workspace_root' };
    }
    if (this.config.workspace.fallback === 'error') throw workspaceUnavailable(projectId);
    if (!this.warnedCwd.get(projectId)) {
      this.warnedCwd.set(projectId, true);
      this.logger.warn(
        `project ${projectId} has no workspace_path and WORKSPACE_ROOT is not set: using the working directory ${process.cwd()}`,
      );
    }
    return { path: await realpath(process.cwd()), source: 'cwd' };
  }

  // Logged once per project until its workspace resolves again (a tenant retrying does not flood the log);
  // the answer names the project but not the host path.
  private unavailable(projectId: string, detail: string): Error {
    if (!this.warnedUnavailable.get(projectId)) {
      this.warnedUnavailable.set(projectId, true);
      this.logger.error(`project ${projectId}: workspace unavailable, nothing will run there until it is fixed: ${detail}`);
    }
    return workspaceDirectoryUnavailable(projectId);
  }
}

const cacheKey = (tenantId: string, projectId: string) => `${tenantId}:${projectId}`;
