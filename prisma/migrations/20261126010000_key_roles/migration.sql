-- Roles on API keys (src/tenants/key-roles.ts). Every existing key becomes `admin`, which is what it was.
ALTER TABLE "api_keys" ADD COLUMN "role" TEXT NOT NULL DEFAULT 'admin';
-- The projects an agent (required) or approver (optional) key is bound to; empty: every project of the tenant.
ALTER TABLE "api_keys" ADD COLUMN "project_ids" TEXT[] DEFAULT ARRAY[]::TEXT[];
-- The tools an agent key may list and call (`*` may end a name); empty: every tool.
ALTER TABLE "api_keys" ADD COLUMN "tools" TEXT[] DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "api_keys" ADD COLUMN "expires_at" TIMESTAMPTZ(3);

-- Who asked for a parked call (it may never decide it), and who decided it.
ALTER TABLE "parked_calls" ADD COLUMN "requested_by_key_id" UUID;
ALTER TABLE "parked_calls" ADD COLUMN "decided_by_key_id" UUID;
ALTER TABLE "parked_calls" ADD COLUMN "decided_by_name" TEXT;

-- The audit row of a decided call names who decided it.
ALTER TABLE "invocations" ADD COLUMN "decided_by_key_id" UUID;
ALTER TABLE "invocations" ADD COLUMN "decided_by_name" TEXT;

-- The audit trail outlives what it describes: deleting a project no longer deletes its invocations; they
-- stay until retention drops their partition, readable by the tenant's admin keys.
ALTER TABLE "invocations" DROP CONSTRAINT "invocations_project_id_fkey";
