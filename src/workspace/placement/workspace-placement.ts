import { realpathSync } from 'node:fs';
import path from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { isCanonicalAbsolute, isPathInside, walkWithoutSymlinks } from '../fs/workspace-directory.js';
import { workspacePathOperatorOnly, workspacePathRefused, workspaceRootsRefused } from '../workspace.errors.js';
import { WorkspacePlacementRepository } from './workspace-placement.repository.js';
import { SandboxUids } from '../../sandbox/sandbox-uids.js';

// Who may put a project's workspace where. A directory on the host is the operator's decision:
//
// - the operator (ADMIN_TOKEN) places any project inside WORKSPACE_ALLOWED_ROOTS;
// - a tenant's keys may place its projects only inside roots the operator granted that tenant, and are
//   refused (403 workspace_path_operator_only) when it has none;
// - nobody may use an allowed root itself, a directory that holds WORKSPACE_ROOT (every project's own
//   directory is there) or lies inside it, a directory that holds or lies inside another tenant's granted
//   root or any other project's workspace, or a path with a symlink in any component (walked from the root
//   with O_NOFOLLOW, on what the kernel opens).
//
// No workspace nests in another, of any tenant: a command may change anything inside its own workspace,
// and bubblewrap resolves the bound directory's path by name when it sets up a sandbox, so a workspace
// inside another would let the outer one's commands swap a component of the inner one's path at that
// instant. With no nesting, no component of a workspace's path is writable from any sandbox.
//
// The resolver repeats the checks that need no database on every resolution (see WorkspaceResolver).
@Injectable()
export class WorkspacePlacement {
  constructor(
    private readonly placements: WorkspacePlacementRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly uids: SandboxUids,
  ) {}

  // The allowed roots as real paths, read now: a root may be created or re-pointed after start-up.
  allowedRoots(): string[] {
    return this.config.workspace.allowedRoots.map(realpathOrSelf);
  }

  workspaceRoot(): string | undefined {
    const root = this.config.workspace.root;
    return root ? realpathOrSelf(root) : undefined;
  }

  // A workspacePath set with a tenant's key (`projectId`: null on create). Answers the canonical path to store.
  async checkTenantPath(tenantId: string, projectId: string | null, requested: string): Promise<string> {
    const roots = (await this.placements.tenantRoots(tenantId)) ?? [];
    if (roots.length === 0) throw workspacePathOperatorOnly();
    const canonical = canonicalOrRefuse(requested, workspacePathRefused);
    if (!roots.some((root) => isPathInside(root, canonical))) {
      throw workspacePathRefused(`'${requested}' is outside the roots granted to this tenant (${roots.join(', ')})`);
    }
    await this.checkPlacement(tenantId, projectId, canonical, workspacePathRefused);
    return canonical;
  }

  // A tenant's key may clear a workspacePath it could have set; one the operator placed stays.
  async assertTenantMayClear(tenantId: string, stored: string | null): Promise<void> {
    if (stored === null) return;
    const roots = await this.tenantRoots(tenantId);
    if (!roots.some((root) => isPathInside(root, stored))) throw workspacePathOperatorOnly();
  }

  // A workspacePath set by the operator for a project of `tenantId`.
  async checkOperatorPath(tenantId: string, projectId: string, requested: string): Promise<string> {
    const canonical = canonicalOrRefuse(requested, workspacePathRefused);
    await this.checkPlacement(tenantId, projectId, canonical, workspacePathRefused);
    return canonical;
  }

  // Roots the operator grants a tenant: each must pass the same checks as a project's path, and they must
  // not overlap one another (a root inside another says nothing more).
  async checkTenantRoots(tenantId: string, requested: string[]): Promise<string[]> {
    const roots = requested.map((r) => canonicalOrRefuse(r, workspaceRootsRefused));
    for (const [i, root] of roots.entries()) {
      const other = roots.find((r, j) => j !== i && (isPathInside(r, root) || isPathInside(root, r)));
      if (other) throw workspaceRootsRefused(`'${root}' overlaps '${other}'`);
      await this.checkPlacement(tenantId, null, root, workspaceRootsRefused, { root: true });
    }
    return roots;
  }

  async setTenantRoots(tenantId: string, roots: string[]): Promise<string[]> {
    const checked = await this.checkTenantRoots(tenantId, roots);
    await this.placements.setTenantRoots(tenantId, checked);
    return checked;
  }

  tenantRoots(tenantId: string): Promise<string[]> {
    return this.placements.tenantRoots(tenantId).then((roots) => roots ?? []);
  }

  // The checks that need no database, also made by the resolver on every cache miss: inside an allowed
  // root (answered), not an allowed root itself, not holding WORKSPACE_ROOT. Null when refused, with why.
  lexicalRoot(canonical: string): { root: string } | { refused: string } {
    const allowed = this.allowedRoots();
    if (allowed.length === 0) return { refused: 'no allowed roots are configured (set WORKSPACE_ALLOWED_ROOTS or WORKSPACE_ROOT)' };
    if (allowed.includes(canonical)) return { refused: `'${canonical}' is an allowed root itself; a project gets a directory inside it` };
    const root = allowed.find((r) => isPathInside(r, canonical));
    if (!root) return { refused: `'${canonical}' is outside the allowed workspace roots` };
    const workspaceRoot = this.workspaceRoot();
    if (workspaceRoot && isPathInside(canonical, workspaceRoot)) {
      return { refused: `'${canonical}' holds WORKSPACE_ROOT, where every project's own directory lives` };
    }
    return { root };
  }

  // `kind.root`: checking a root to grant rather than a project's workspace.
  private async checkPlacement(
    tenantId: string,
    projectId: string | null,
    canonical: string,
    refuse: (reason: string) => Error,
    kind: { root: boolean } = { root: false },
  ): Promise<void> {
    const lexical = this.lexicalRoot(canonical);
    if ('refused' in lexical) throw refuse(lexical.refused);
    const workspaceRoot = this.workspaceRoot();
    if (workspaceRoot && isPathInside(workspaceRoot, canonical)) {
      throw refuse(`'${canonical}' is inside WORKSPACE_ROOT, where each project has its own directory`);
    }
    // Other tenants' directories are not named: the answer is the same whichever one it is.
    const { otherTenantRoots, projects } = await this.placements.placements(tenantId, projectId);
    const overlaps = (dir: string) => isPathInside(dir, canonical) || isPathInside(canonical, dir);
    if (otherTenantRoots.some(overlaps) || projects.some((p) => p.tenantId !== tenantId && overlaps(p.path))) {
      throw refuse(`'${canonical}' holds or lies inside a directory that belongs to another tenant`);
    }
    // A granted root may hold the tenant's own projects' workspaces; a workspace holds no other.
    const nested = projects.filter((p) => (kind.root ? isPathInside(p.path, canonical) : overlaps(p.path)));
    if (nested.length > 0) throw refuse(`'${canonical}' holds or lies inside another project's workspace (workspaces never nest)`);
    // The service's uid, SANDBOX_UID, or the tenant's own: never another tenant's.
    const problem = walkWithoutSymlinks(lexical.root, canonical, await this.uids.owners(tenantId));
    if (problem) throw refuse(problem.detail);
  }
}

function canonicalOrRefuse(requested: string, refuse: (reason: string) => Error): string {
  if (!isCanonicalAbsolute(requested)) {
    throw refuse(
      `'${requested}' must be a normalized absolute path (starting with '/', without '.', '..', repeated or trailing '/', or NUL)`,
    );
  }
  return requested;
}

function realpathOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
