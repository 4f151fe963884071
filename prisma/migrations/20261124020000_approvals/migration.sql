-- The tools of a project whose calls wait for a person's approval before they run.
ALTER TABLE "projects" ADD COLUMN "approval_required" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- Calls parked for approval. The validated arguments are kept (in clear, as the tool needs them) only until
-- the call is decided or expires; `outcome` then holds what the call answered. started_at is the call's
-- audit row key (invocations is partitioned by it), so the decision updates that same row.
CREATE TABLE "parked_calls" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "tool" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "arguments" JSONB,
    "timeout_ms" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "reason" TEXT,
    "outcome" JSONB,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "decided_at" TIMESTAMPTZ(3),

    CONSTRAINT "parked_calls_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "parked_calls_tenant_id_project_id_idx" ON "parked_calls"("tenant_id", "project_id");
CREATE INDEX "parked_calls_status_expires_at_idx" ON "parked_calls"("status", "expires_at");

ALTER TABLE "parked_calls" ADD CONSTRAINT "parked_calls_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
