-- Toolsets (src/toolsets): a project's curated tools, by slug.
CREATE TABLE "toolsets" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "mode" TEXT NOT NULL,
    "tools" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "toolsets_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "toolsets_project_id_slug_key" ON "toolsets"("project_id", "slug");
CREATE INDEX "toolsets_tenant_id_project_id_idx" ON "toolsets"("tenant_id", "project_id");
ALTER TABLE "toolsets" ADD CONSTRAINT "toolsets_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- An agent key bound to one toolset of its project.
ALTER TABLE "api_keys" ADD COLUMN "toolset" TEXT;

-- The audit row of a call through a toolset: the toolset and the name the model used (tool is the real one).
ALTER TABLE "invocations" ADD COLUMN "toolset" TEXT;
ALTER TABLE "invocations" ADD COLUMN "exposed_tool" TEXT;

-- A parked call of a tool confined to a directory of the workspace runs there when approved.
ALTER TABLE "parked_calls" ADD COLUMN "path_prefix" TEXT;
