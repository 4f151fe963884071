-- Tools: per-project shell settings and the invocation audit log.

ALTER TABLE "projects" ADD COLUMN "shell_enabled" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "projects" ADD COLUMN "shell_allowlist" TEXT[] DEFAULT ARRAY[]::TEXT[];

CREATE TABLE "invocations" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "tool" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "event" TEXT,
    "error_code" TEXT,
    "error_message" TEXT,
    "duration_ms" INTEGER NOT NULL,
    "arguments" JSONB,
    "arguments_truncated" BOOLEAN NOT NULL DEFAULT false,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "invocations_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "invocations_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "invocations_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "invocations_tenant_id_project_id_created_at_id_idx" ON "invocations"("tenant_id", "project_id", "created_at", "id");
CREATE INDEX "invocations_project_id_tool_created_at_idx" ON "invocations"("project_id", "tool", "created_at");
CREATE INDEX "invocations_project_id_status_created_at_idx" ON "invocations"("project_id", "status", "created_at");
