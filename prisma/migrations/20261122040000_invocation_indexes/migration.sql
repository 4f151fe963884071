-- The log is read in seq order (20261122030000_invocation_order), so the created_at indexes serve no
-- query any more, yet every audit row paid to keep them up to date. Reads filtered by tool or status get
-- seq-ordered indexes instead: four secondary indexes become three.
DROP INDEX "invocations_tenant_id_project_id_created_at_id_idx";
DROP INDEX "invocations_project_id_tool_created_at_idx";
DROP INDEX "invocations_project_id_status_created_at_idx";
CREATE INDEX "invocations_project_id_tool_seq_idx" ON "invocations"("project_id", "tool", "seq");
CREATE INDEX "invocations_project_id_status_seq_idx" ON "invocations"("project_id", "status", "seq");
