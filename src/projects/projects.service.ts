import { Injectable } from '@nestjs/common';
import { ProjectChanges } from '../common/events/project-changes.js';
import { decodeCursor, type Page, toPage } from '../common/pagination/cursor.js';
import { Prisma, type Project } from '../generated/prisma/client.js';
import { badRequest } from '../common/errors/app-error.js';
import { SkillTools } from '../skills/skill-tools.js';
import { BUILTIN_TOOL_NAMES } from '../tools/builtin-tool-names.js';
import { WorkspaceResolver } from '../workspace/workspace-resolver.js';
import { projectNotFound, projectSlugTaken } from './projects.errors.js';
import type { CreateProjectDto, UpdateProjectDto } from './dto/project.dto.js';
import { ProjectsRepository } from './projects.repository.js';

const DEFAULT_PAGE_SIZE = 20;

@Injectable()
export class ProjectsService {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly workspaces: WorkspaceResolver,
    private readonly changes: ProjectChanges,
    private readonly skillTools: SkillTools,
  ) {}

  async create(tenantId: string, dto: CreateProjectDto): Promise<Project> {
    const workspacePath = dto.workspacePath ? await this.workspaces.checkWorkspacePath(dto.workspacePath) : null;
    const project = await withSlugConflict(dto.slug, () =>
      this.projects.create(tenantId, {
        name: dto.name,
        slug: dto.slug,
        workspacePath,
        shellEnabled: dto.shellEnabled ?? false,
        shellAllowlist: dto.shellAllowlist ?? [],
        // A new project has no skills yet: only built-in tools can be named.
        approvalRequired: checkToolNames(dto.approvalRequired ?? [], BUILTIN_TOOL_NAMES),
      }),
    );
    await this.workspaces.provision(project.id);
    return project;
  }

  async list<R>(tenantId: string, limit = DEFAULT_PAGE_SIZE, cursor: string | undefined, map: (p: Project) => R): Promise<Page<R>> {
    const after = cursor ? decodeCursor(cursor) : null;
    return toPage(await this.projects.listPage(tenantId, limit, after), limit, map);
  }

  async get(tenantId: string, projectId: string): Promise<Project> {
    const project = await this.projects.findById(tenantId, projectId);
    if (!project) throw projectNotFound(projectId);
    return project;
  }

  async update(tenantId: string, projectId: string, dto: UpdateProjectDto): Promise<Project> {
    // Existence first, so another tenant's id answers 404 before any validation can tell it apart.
    await this.get(tenantId, projectId);
    const workspacePath =
      dto.workspacePath === undefined || dto.workspacePath === null
        ? dto.workspacePath
        : await this.workspaces.checkWorkspacePath(dto.workspacePath);
    const fields = {
      name: dto.name,
      slug: dto.slug,
      workspacePath,
      shellEnabled: dto.shellEnabled,
      shellAllowlist: dto.shellAllowlist,
      approvalRequired: dto.approvalRequired === undefined ? undefined : await this.approvalNames(tenantId, projectId, dto.approvalRequired),
    };
    const project = await withSlugConflict(dto.slug ?? '', () => this.projects.update(tenantId, projectId, fields));
    this.changes.changed(tenantId, projectId);
    if (!project) throw projectNotFound(projectId);
    return project;
  }

  private async approvalNames(tenantId: string, projectId: string, names: string[]): Promise<string[]> {
    const skillTools = await this.skillTools.forProject(tenantId, projectId);
    return checkToolNames(names, [...BUILTIN_TOOL_NAMES, ...skillTools.map((t) => t.executor.definition.name)]);
  }

  async delete(tenantId: string, projectId: string): Promise<void> {
    const deleted = await this.projects.delete(tenantId, projectId);
    this.changes.changed(tenantId, projectId);
    if (!deleted) throw projectNotFound(projectId);
  }
}

// Tool names the project can call: its built-ins and the tools of its enabled skills.
function checkToolNames(names: string[], known: readonly string[]): string[] {
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0) {
    throw badRequest('unknown_tool', `approvalRequired names tool(s) this project does not have: ${unknown.join(', ')}; GET /v1/projects/{id}/tools lists them`, {
      unknown,
    });
  }
  return [...new Set(names)];
}

async function withSlugConflict<T>(slug: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
      throw projectSlugTaken(slug);
    }
    throw error;
  }
}
