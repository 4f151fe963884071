-- The audit log becomes a table partitioned by day of started_at, so retention drops whole partitions
-- (a catalog change) instead of deleting rows (long scans, dead tuples, vacuum). A unique key of a
-- partitioned table must hold the partition key: the primary key becomes (id, started_at). started_at
-- is set by the service, so a batch retried after a lost answer still conflicts with the rows it wrote.
-- Existing rows are copied, one partition per UTC day; the service creates the partitions ahead of time
-- from then on (src/audit/audit-partitions.ts).
ALTER TABLE "invocations" RENAME TO "invocations_unpartitioned";
ALTER INDEX "invocations_pkey" RENAME TO "invocations_unpartitioned_pkey";
ALTER INDEX "invocations_tenant_id_project_id_seq_idx" RENAME TO "invocations_unpartitioned_tenant_seq_idx";
ALTER INDEX "invocations_project_id_tool_seq_idx" RENAME TO "invocations_unpartitioned_tool_seq_idx";
ALTER INDEX "invocations_project_id_status_seq_idx" RENAME TO "invocations_unpartitioned_status_seq_idx";
ALTER TABLE "invocations_unpartitioned" RENAME CONSTRAINT "invocations_tenant_id_fkey" TO "invocations_unpartitioned_tenant_id_fkey";
ALTER TABLE "invocations_unpartitioned" RENAME CONSTRAINT "invocations_project_id_fkey" TO "invocations_unpartitioned_project_id_fkey";

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
    "seq" BIGINT NOT NULL DEFAULT nextval('"invocations_seq_seq"'),
    "redacted_paths" JSONB,
    CONSTRAINT "invocations_pkey" PRIMARY KEY ("id", "started_at"),
    CONSTRAINT "invocations_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "invocations_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE
) PARTITION BY RANGE ("started_at");
-- The sequence carries on where the old table left it, so cursors issued before stay valid.
ALTER SEQUENCE "invocations_seq_seq" OWNED BY "invocations"."seq";
CREATE INDEX "invocations_tenant_id_project_id_seq_idx" ON "invocations"("tenant_id", "project_id", "seq");
CREATE INDEX "invocations_project_id_tool_seq_idx" ON "invocations"("project_id", "tool", "seq");
CREATE INDEX "invocations_project_id_status_seq_idx" ON "invocations"("project_id", "status", "seq");

DO $$
DECLARE
  day DATE;
BEGIN
  FOR day IN SELECT DISTINCT ("started_at" AT TIME ZONE 'UTC')::date FROM "invocations_unpartitioned" LOOP
    EXECUTE format(
      'CREATE TABLE %I PARTITION OF "invocations" FOR VALUES FROM (%L) TO (%L)',
      'invocations_p' || to_char(day, 'YYYYMMDD') || 't000000',
      day::timestamp AT TIME ZONE 'UTC',
      (day + 1)::timestamp AT TIME ZONE 'UTC'
    );
  END LOOP;
END $$;

INSERT INTO "invocations" ("id", "tenant_id", "project_id", "tool", "status", "event", "error_code", "error_message",
  "duration_ms", "arguments", "arguments_truncated", "started_at", "finished_at", "created_at", "seq", "redacted_paths")
SELECT "id", "tenant_id", "project_id", "tool", "status", "event", "error_code", "error_message",
  "duration_ms", "arguments", "arguments_truncated", "started_at", "finished_at", "created_at", "seq", "redacted_paths"
FROM "invocations_unpartitioned";

DROP TABLE "invocations_unpartitioned";
