import { chown, mkdir, realpath, stat } from 'node:fs/promises';
import { Metrics } from '../metrics/metrics.js';
import path from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ChangeBus } from '../common/bus/change-bus.js';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { ProjectChanges } from '../common/events/project-changes.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { StaleTempSweeper } from './stale-temp-sweeper.js';
import { ProjectAccess } from '../projects/project-access.js';
import { workspacePathRefused, workspaceUnavailable } from './workspace.errors.js';

export type WorkspaceSource = 'database' | 'workspace_root' | 'cwd';

export interface ResolvedWorkspace {
  // Real path (symlinks resolved) of the workspace directory.
  path: string;
  source: WorkspaceSource;
}

// Finds a project's workspace directory: its workspace_path column, then WORKSPACE_ROOT/<projectId>,
// then the working directory. ProjectAccess answers whether the project is the tenant's (and its
// workspace_path) from its cache; this cache keeps the directory checks (realpath, stat, mkdir) off the hot
// path. Updates and deletes of a project invalidate both.
@Injectable()
export class WorkspaceResolver {
  private readonly logger = new Logger('Workspace');
  private readonly cache: TtlLruCache<string, ResolvedWorkspace>;
  // Projects already warned about falling back to the working directory (bounded like the cache).
  private readonly warnedCwd: TtlLruCache<string, true>;

  constructor(
    private readonly projects: ProjectAccess,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    changes: ProjectChanges,
    private readonly sweeper: StaleTempSweeper,
    metrics: Metrics,
    bus: ChangeBus,
  ) {
    changes.subscribe((tenantId, projectId) => this.invalidate(tenantId, projectId));
    const { cacheTtlMs, cacheMaxEntries } = config.workspace;
    this.cache = new TtlLruCache(cacheTtlMs, cacheMaxEntries);
    bus.onResync(() => this.cache.clear());
    this.warnedCwd = new TtlLruCache(Number.MAX_SAFE_INTEGER, cacheMaxEntries);
    metrics.cache('workspaces', this.cache);
  }

  async resolve(tenantId: string, projectId: string): Promise<ResolvedWorkspace> {
    // Read before the project's settings: a resolution that overlapped a change is answered but not cached.
    const version = this.cache.version;
    const { workspacePath } = await this.projects.settings(tenantId, projectId);
    const key = cacheKey(tenantId, projectId);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const resolved = await this.resolveUncached(projectId, workspacePath);
    this.cache.setIfUnchanged(version, key, resolved);
    this.sweeper.sweepOnce(resolved.path);
    return resolved;
  }

  invalidate(tenantId: string, projectId: string): void {
    this.cache.delete(cacheKey(tenantId, projectId));
  }

  // Called when a project is created: its directory under WORKSPACE_ROOT exists from the start.
  async provision(projectId: string): Promise<void> {
    const root = this.config.workspace.root;
    if (root) await this.createWorkspaceDirectory(root, projectId);
  }

  // WORKSPACE_ROOT may be entered but not listed by others (the sandbox's uid must pass through it);
  // a project's directory is private to the uid commands run as, which a root service hands it to.
  private async createWorkspaceDirectory(root: string, projectId: string): Promise<string> {
    await mkdir(root, { recursive: true, mode: 0o711 });
    const dir = path.join(root, projectId);
    if ((await mkdir(dir, { recursive: true, mode: 0o700 })) !== undefined && process.getuid?.() === 0) {
      const { uid, gid } = this.config.tools.sandbox;
      await chown(dir, uid, gid);
    }
    return dir;
  }

  // A tenant may only point a project at an existing directory inside an allowed root, judged on the
  // real path so that a symlink cannot smuggle in `/` or `/etc`. Answers the real path to store.
  async checkWorkspacePath(requested: string): Promise<string> {
    if (!path.isAbsolute(requested)) throw workspacePathRefused('it must be an absolute path');
    if (requested.includes('\0')) throw workspacePathRefused('it contains a NUL byte');
    // Real paths of the roots too, taken now: a root may be created or re-pointed after start-up.
    const roots = await Promise.all(this.config.workspace.allowedRoots.map((root) => realpathOrSelf(root)));
    if (roots.length === 0) {
      throw workspacePathRefused('no allowed roots are configured (set WORKSPACE_ALLOWED_ROOTS or WORKSPACE_ROOT)');
    }
    let real: string;
    try {
      real = await realpath(requested);
      if (!(await stat(real)).isDirectory()) throw new Error('not a directory');
    } catch {
      throw workspacePathRefused(`'${requested}' is not an existing directory`);
    }
    if (!roots.some((root) => isInside(root, real))) {
      throw workspacePathRefused(`'${requested}' is outside the allowed workspace roots`);
    }
    return real;
  }

  private async resolveUncached(projectId: string, workspacePath: string | null): Promise<ResolvedWorkspace> {
    if (workspacePath !== null) {
      const real = await existingDirectory(workspacePath);
      if (real) return { path: real, source: 'database' };
      this.logger.warn(`project ${projectId}: workspace_path '${workspacePath}' is not an existing directory; trying the next source`);
    }
    const root = this.config.workspace.root;
    if (root) {
      const dir = await this.createWorkspaceDirectory(root, projectId);
      return { path: await realpath(dir), source: 'workspace_root' };
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
}

const cacheKey = (tenantId: string, projectId: string) => `${tenantId}:${projectId}`;

export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

async function existingDirectory(p: string): Promise<string | null> {
  try {
    const real = await realpath(p);
    return (await stat(real)).isDirectory() ? real : null;
  } catch {
    return null;
  }
}

async function realpathOrSelf(p: string): Promise<string> {
  try {
    return await realpath(p);
  } catch {
    return path.resolve(p);
  }
}
