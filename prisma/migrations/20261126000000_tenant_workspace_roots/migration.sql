-- Directories the operator granted a tenant: only inside them may the tenant's own keys set a project's
-- workspace_path (see src/workspace/placement/workspace-placement.ts). Empty: the operator alone places workspaces.
ALTER TABLE "tenants" ADD COLUMN "workspace_roots" TEXT[] DEFAULT ARRAY[]::TEXT[];
