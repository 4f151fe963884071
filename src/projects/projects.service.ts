import { Injectable, Logger } from '@nestjs/common';
import { ProjectChanges } from '../common/events/project-changes.js';
import { decodeCursor, toPage } from '../common/pagination/cursor.js';
import { UNIQUE_TAKEN } from '../database/unique-violation.js';
import { AppError, badRequest } from '../common/errors/app-error.js';
import { SkillTools } from '../skills/skill-tools.js';
import { BUILTIN_TOOL_NAMES } from '../execution/builtin-tool-names.js';
import { TOOL_CLASSES } from '../tools/tool-classes.js';
import { WorkspaceResolver } from '../workspace/workspace-resolver.js';
import { WorkspacePlacement } from '../workspace/placement/workspace-placement.js';
import type { Project } from '../generated/prisma/client.js';
import { projectNotFound, projectSlugTaken } from './projects.errors.js';
import {
  AdminProjectResponseDto,
  type CreateProjectDto,
  type ProjectListResponseDto,
  ProjectResponseDto,
  type UpdateProjectDto,
} from './dto/project.dto.js';
import { ProjectAccess } from './project-access.js';
import { ProjectsRepository } from './projects.repository.js';
import { BudgetsRepository } from '../budgets/budgets.repository.js';
import { tenantNotFound } from '../tenants/tenants.errors.js';
import { TenantBudgets } from '../budgets/tenant-budgets.js';

const DEFAULT_PAGE_SIZE = 20;

@Injectable()
export class ProjectsService {
  private readonly logger = new Logger('Projects');

  constructor(
    private readonly projects: ProjectsRepository,
    private readonly workspaces: WorkspaceResolver,
    private readonly changes: ProjectChanges,
    private readonly skillTools: SkillTools,
    private readonly access: ProjectAccess,
    private readonly placement: WorkspacePlacement,
    private readonly budgets: TenantBudgets,
    private readonly budgetLocks: BudgetsRepository,
  ) {}

  async create(tenantId: string, dto: CreateProjectDto): Promise<ProjectResponseDto> {
    const workspacePath = dto.workspacePath ? await this.placement.checkTenantPath(tenantId, null, dto.workspacePath) : null;
    const fields = {
      name: dto.name,
      slug: dto.slug,
      workspacePath,
      shellEnabled: dto.shellEnabled ?? false,
      shellAllowlist: dto.shellAllowlist ?? [],
      // A new project has no skills yet: only built-in tools can be named.
      approvalRequired: checkToolNames(dto.approvalRequired ?? [], BUILTIN_TOOL_NAMES),
    };
    // Counted and created under the tenant's row lock: two instances cannot both make the last one allowed.
    const project = await this.budgetLocks.withTenantLocked(tenantId, async (tx, overrides) => {
      const count = await this.projects.countLocked(tx, tenantId);
      const advice = 'Delete a project the tenant no longer needs, or ask the operator for a larger budget.';
      return this.budgets.refusalForOneMore(overrides, 'maxProjects', count, advice) ?? this.projects.createLocked(tx, tenantId, fields);
    });
    if (project instanceof AppError) throw project;
    // The tenant itself was deleted while this request ran.
    if (project === false) throw tenantNotFound(tenantId);
    if (project === UNIQUE_TAKEN) throw projectSlugTaken(dto.slug);
    await this.workspaces.provision(tenantId, project.id);
    return this.tenantView(tenantId, project);
  }

  // `only`: the projects a bound key may see (null: all of the tenant's).
  async list(
    tenantId: string,
    limit = DEFAULT_PAGE_SIZE,
    cursor: string | undefined,
    only: readonly string[] | null = null,
  ): Promise<ProjectListResponseDto> {
    const after = cursor ? decodeCursor(cursor) : null;
    const roots = await this.placement.tenantRoots(tenantId);
    return toPage(await this.projects.listPage(tenantId, limit, after, only), limit, (p) => ProjectResponseDto.from(p, roots));
  }

  async get(tenantId: string, projectId: string): Promise<ProjectResponseDto> {
    const project = await this.projects.findById(tenantId, projectId);
    if (!project) throw projectNotFound(projectId);
    return this.tenantView(tenantId, project);
  }

  async update(tenantId: string, projectId: string, dto: UpdateProjectDto): Promise<ProjectResponseDto> {
    // Existence first, so another tenant's id answers 404 before any validation can tell it apart.
    await this.access.assertOwned(tenantId, projectId);
    const workspacePath =
      dto.workspacePath === undefined || dto.workspacePath === null
        ? dto.workspacePath
        : await this.placement.checkTenantPath(tenantId, projectId, dto.workspacePath);
    // Clearing is the tenant's to do only for a path it set itself, inside its granted roots.
    if (workspacePath === null)
      await this.placement.assertTenantMayClear(tenantId, (await this.access.settings(tenantId, projectId)).workspacePath);
    const fields = {
      name: dto.name,
      slug: dto.slug,
      workspacePath,
      shellEnabled: dto.shellEnabled,
      shellAllowlist: dto.shellAllowlist,
      approvalRequired:
        dto.approvalRequired === undefined ? undefined : await this.approvalNames(tenantId, projectId, dto.approvalRequired),
    };
    const project = await this.projects.update(tenantId, projectId, fields);
    this.changes.changed(tenantId, projectId);
    if (project === UNIQUE_TAKEN) throw projectSlugTaken(dto.slug ?? '');
    if (!project) throw projectNotFound(projectId);
    return this.tenantView(tenantId, project);
  }

  // The operator's view of any project: its tenant and the absolute workspace path on the host.
  async getForOperator(projectId: string): Promise<AdminProjectResponseDto> {
    const project = await this.projects.findByIdAnyTenant(projectId);
    if (!project) throw projectNotFound(projectId);
    const workspace = await this.workspaces.resolve(project.tenantId, project.id).catch((error: unknown) => {
      if (error instanceof AppError && error.code === 'workspace_unavailable') return null;
      throw error;
    });
    return AdminProjectResponseDto.fromAdmin(project, workspace);
  }

  // The operator places a project's workspace (or, with null, gives it back its own directory).
  async placeByOperator(projectId: string, workspacePath: string | null): Promise<AdminProjectResponseDto> {
    const project = await this.projects.findByIdAnyTenant(projectId);
    if (!project) throw projectNotFound(projectId);
    const checked = workspacePath === null ? null : await this.placement.checkOperatorPath(project.tenantId, projectId, workspacePath);
    await this.projects.update(project.tenantId, projectId, { workspacePath: checked });
    this.changes.changed(project.tenantId, projectId);
    return this.getForOperator(projectId);
  }

  private async tenantView(tenantId: string, project: Project): Promise<ProjectResponseDto> {
    return ProjectResponseDto.from(project, await this.placement.tenantRoots(tenantId));
  }

  private async approvalNames(tenantId: string, projectId: string, names: string[]): Promise<string[]> {
    const skillTools = await this.skillTools.forProject(tenantId, projectId);
    return checkToolNames(names, [...BUILTIN_TOOL_NAMES, ...skillTools.map((t) => t.executor.definition.name)]);
  }

  async delete(tenantId: string, projectId: string): Promise<void> {
    const project = await this.projects.findById(tenantId, projectId);
    const deleted = project !== null && (await this.projects.delete(tenantId, projectId));
    this.changes.changed(tenantId, projectId);
    if (!deleted) throw projectNotFound(projectId);
    // Its files go after the answer (a large tree takes a while); only the directory Toolgate made for it.
    if (project.workspacePath === null) {
      void this.workspaces.removeProvisioned(projectId).catch((error: unknown) => {
        this.logger.warn(
          `The workspace of deleted project ${projectId} could not be removed: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
    }
  }
}

// approvalRequired entries: a tool the project has (built-in or from its skills), a name ending in `*`
// (matches tools added later too), or a class (@commands, @writes, @network, @all; see tools/tool-classes.ts).
function checkToolNames(names: string[], known: readonly string[]): string[] {
  const unknown = names.filter(
    (n) => !(known.includes(n) || (n.endsWith('*') && n.length > 1) || (TOOL_CLASSES as readonly string[]).includes(n)),
  );
  if (unknown.length > 0) {
    throw badRequest(
      'unknown_tool',
      `approvalRequired names tool(s) this project does not have: ${unknown.join(', ')}; GET /v1/projects/{id}/tools lists them (or name a class: ${TOOL_CLASSES.join(', ')}, or a prefix ending in *)`,
      { unknown },
    );
  }
  return [...new Set(names)];
}
