import { Injectable } from '@nestjs/common';
import { tenantBudgetExceeded } from '../budgets/budgets.errors.js';
import { TenantBudgets } from '../budgets/tenant-budgets.js';
import { ProjectsRepository } from '../projects/projects.repository.js';
import { WorkspaceQuota } from './workspace-quota.js';
import { WorkspaceResolver } from './workspace-resolver.js';

export interface TenantStorageUsage {
  bytes: number;
  inodes: number;
  // False when some figure is an upper bound (a command or a delete since it was measured).
  measured: boolean;
  // False when a workspace had no figure to count (cachedOnly).
  complete: boolean;
}

// What a command may grow its workspace to: the workspace's quota, or less when the tenant's storage
// budget leaves less room (`tenantBound`).
export interface CommandStorage {
  bytes: number;
  usageAtStart: number;
  inodes: number;
  entriesAtStart: number;
  // Which of the two the tenant's budget bounds, and the budget's figures.
  tenantBound: { bytes: boolean; inodes: boolean };
  budget: { storageBytes: number; storageInodes: number };
}

const ADVICE = 'Delete files the tenant no longer needs, in any of its projects (delete_file), or ask the operator for a larger budget.';

// The tenant's storageBytes and storageInodes budgets: all its projects' workspaces together, each counted
// once (two projects may share one directory), from the same figures as each workspace's quota (measured
// in the worker pool, at most USAGE_TTL_MS old, kept current by the file tools' writes). A write is checked
// against both, the workspace's quota and the tenant's budget, before anything of it is written; a
// command may grow its workspace only as far as both leave room, and is stopped past it. A workspace that
// cannot be resolved (gone, or refused) is left out: nothing can be written there.
@Injectable()
export class TenantStorage {
  constructor(
    private readonly quota: WorkspaceQuota,
    private readonly resolver: WorkspaceResolver,
    private readonly projects: ProjectsRepository,
    private readonly budgets: TenantBudgets,
  ) {}

  // `fresh`: upper bounds are measured again; `cachedOnly`: nothing is measured, a workspace without a
  // figure counts 0 (the metrics, which must not walk directories when scraped).
  async usage(tenantId: string, { fresh = false, cachedOnly = false } = {}): Promise<TenantStorageUsage> {
    const workspaces = new Set<string>();
    for (const projectId of await this.projects.idsOf(tenantId)) {
      const resolved = await this.resolver.resolve(tenantId, projectId).catch(() => undefined);
      if (resolved) workspaces.add(resolved.path);
    }
    const cached = cachedOnly ? [...workspaces].map((workspace) => this.quota.cachedUsageOf(workspace)) : [];
    const figures = cachedOnly
      ? cached.map((figure) => figure ?? { bytes: 0, entries: 0, measured: false })
      : await Promise.all([...workspaces].map((workspace) => this.quota.usageOf(workspace, fresh)));
    return {
      bytes: figures.reduce((sum, f) => sum + f.bytes, 0),
      inodes: figures.reduce((sum, f) => sum + f.entries, 0),
      measured: figures.every((f) => f.measured),
      complete: cached.every((figure) => figure !== undefined),
    };
  }

  // Makes room for a write that grows `workspace` by `growth` bytes (and may add one entry), or refuses
  // it: tenant_budget_exceeded (403) past the tenant's budget, workspace_quota_exceeded past the
  // workspace's quota. The answer gives the room back when the write did not happen.
  async reserve(tenantId: string, workspace: string, growth: number, display: string, signal?: AbortSignal): Promise<() => void> {
    if (growth > 0) await this.assertRoom(tenantId, growth);
    return this.quota.reserve(workspace, growth, display, signal);
  }

  // What a command starts from: the workspace's quota, lowered to its share of the room the tenant's budget
  // leaves. The share is that room over concurrentCommands: commands running at once each start from the same
  // figures, and with the whole room each, four of them in four projects took a tenant to 1.75x its inodes.
  // A tenant at its budget still runs commands (one that deletes files is how it gets room back); one that
  // grows its workspace is stopped at once.
  async forCommand(tenantId: string, workspace: string): Promise<CommandStorage> {
    const own = await this.quota.forCommand(workspace);
    const budget = await this.figures(tenantId);
    let usage = await this.usage(tenantId);
    if (!usage.measured && (usage.bytes >= budget.storageBytes || usage.inodes >= budget.storageInodes))
      usage = await this.usage(tenantId, { fresh: true });
    const share = Math.max(1, budget.concurrentCommands);
    const bytes = own.usageAtStart + Math.floor(Math.max(0, budget.storageBytes - usage.bytes) / share);
    const inodes = own.entriesAtStart + Math.floor(Math.max(0, budget.storageInodes - usage.inodes) / share);
    return {
      ...own,
      bytes: Math.min(own.bytes, bytes),
      inodes: Math.min(own.inodes, inodes),
      tenantBound: { bytes: bytes < own.bytes, inodes: inodes < own.inodes },
      budget: { storageBytes: budget.storageBytes, storageInodes: budget.storageInodes },
    };
  }

  private async assertRoom(tenantId: string, growth: number): Promise<void> {
    const budget = await this.figures(tenantId);
    const over = (u: TenantStorageUsage) => u.bytes + growth > budget.storageBytes || u.inodes >= budget.storageInodes;
    let usage = await this.usage(tenantId);
    // An upper bound never refuses: it is measured first.
    if (over(usage) && !usage.measured) usage = await this.usage(tenantId, { fresh: true });
    if (usage.bytes + growth > budget.storageBytes)
      throw tenantBudgetExceeded('storageBytes', budget.storageBytes, usage.bytes, growth, ADVICE);
    if (usage.inodes >= budget.storageInodes) throw tenantBudgetExceeded('storageInodes', budget.storageInodes, usage.inodes, 1, ADVICE);
  }

  private async figures(tenantId: string) {
    const figures = await this.budgets.figures(tenantId);
    return figures ?? this.budgets.defaults;
  }
}
