-- Pinned definitions (src/skills/review): an MCP skill keeps the source it was imported from (URL and
-- header values sealed like the executors'), so it can be read again on a schedule; when it was last read.
ALTER TABLE "skills" ADD COLUMN "source" JSONB;
ALTER TABLE "skills" ADD COLUMN "source_checked_at" TIMESTAMPTZ(3);
CREATE INDEX "skills_source_checked_at_idx" ON "skills"("source_checked_at");

-- A definition an upstream answered that differs from the one reviewed (or a tool it added or dropped, or a
-- first import the description rules flagged), waiting for an admin: pending, then accepted or rejected;
-- superseded when the upstream went back to the reviewed definition or the skill was replaced.
CREATE TABLE "skill_tool_changes" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "skill_id" UUID NOT NULL,
    "tool" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "previous" JSONB,
    "proposed" JSONB,
    "proposed_hash" TEXT,
    "diff" JSONB NOT NULL,
    "flags" JSONB NOT NULL,
    "incompatible" BOOLEAN NOT NULL DEFAULT false,
    "detected_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "decided_at" TIMESTAMPTZ(3),
    "decided_by_key_id" UUID,
    "decided_by_name" TEXT,
    CONSTRAINT "skill_tool_changes_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "skill_tool_changes_skill_id_fkey" FOREIGN KEY ("skill_id") REFERENCES "skills"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "skill_tool_changes_skill_id_status_idx" ON "skill_tool_changes"("skill_id", "status");
CREATE INDEX "skill_tool_changes_tenant_id_idx" ON "skill_tool_changes"("tenant_id");
