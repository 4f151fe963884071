-- The audit log is ordered by write order: rows written by one multi-row insert share created_at.
ALTER TABLE "invocations" ADD COLUMN "seq" BIGSERIAL NOT NULL;
CREATE INDEX "invocations_tenant_id_project_id_seq_idx" ON "invocations"("tenant_id", "project_id", "seq");
