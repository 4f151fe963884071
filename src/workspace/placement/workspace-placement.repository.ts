import { Injectable } from '@nestjs/common';
import { isUuid } from '../../common/validation/is-uuid.js';
import { PrismaService } from '../../database/prisma.service.js';

// Where workspaces already are, for the checks that keep one tenant's directories apart from another's.
// Read only when a path or a root is being set (an operator's or an admin's act), never on the call path.
@Injectable()
export class WorkspacePlacementRepository {
  constructor(private readonly prisma: PrismaService) {}

  // The roots the operator granted this tenant; null when there is no such tenant.
  async tenantRoots(tenantId: string): Promise<string[] | null> {
    if (!isUuid(tenantId)) return null;
    const tenant = await this.prisma.tenant.findUnique({ where: { id: tenantId }, select: { workspaceRoots: true } });
    return tenant?.workspaceRoots ?? null;
  }

  // Every other tenant's granted roots, and every placed project directory but `exceptProjectId`'s.
  async placements(
    tenantId: string,
    exceptProjectId: string | null,
  ): Promise<{ otherTenantRoots: string[]; projects: Array<{ tenantId: string; path: string }> }> {
    const [tenants, projects] = await Promise.all([
      this.prisma.tenant.findMany({ where: { id: { not: tenantId } }, select: { workspaceRoots: true } }),
      this.prisma.project.findMany({
        where: { workspacePath: { not: null }, ...(exceptProjectId && { id: { not: exceptProjectId } }) },
        select: { tenantId: true, workspacePath: true },
      }),
    ]);
    return {
      otherTenantRoots: tenants.flatMap((t) => t.workspaceRoots),
      projects: projects.map((p) => ({ tenantId: p.tenantId, path: p.workspacePath! })),
    };
  }

  setTenantRoots(tenantId: string, roots: string[]): Promise<unknown> {
    return this.prisma.tenant.update({ where: { id: tenantId }, data: { workspaceRoots: roots } });
  }
}
