-- MCP tasks (src/mcp/mcp-tasks.service.ts): a tools/call answered with a task handle instead of its result.
-- The id is the task id, random and unguessable; every read is scoped by tenant, project and the key that
-- made the call. A parked call's task reads its state from the parked call (invocation_id); a call that ran
-- at once (protocol revision 2025-11-25 asks a task for every augmented call) keeps its result here.
CREATE TABLE "mcp_tasks" (
    "id" TEXT NOT NULL,
    "tenant_id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "api_key_id" TEXT NOT NULL,
    "invocation_id" UUID,
    "status" TEXT NOT NULL,
    "shape" JSONB NOT NULL,
    "result" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "mcp_tasks_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "mcp_tasks_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "mcp_tasks_caller_idx" ON "mcp_tasks"("tenant_id", "project_id", "api_key_id", "created_at");
CREATE INDEX "mcp_tasks_expires_at_idx" ON "mcp_tasks"("expires_at");
