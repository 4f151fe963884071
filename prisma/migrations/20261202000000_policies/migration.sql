-- Cedar policies (src/policy): one policy set per tenant and one per project, each with its version and the key
-- that set it. The tenant's and the project's sets are evaluated together before every call.
CREATE TABLE "tenant_policies" (
    "tenant_id" UUID NOT NULL,
    "text" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "set_by_key_id" UUID,
    "set_by_name" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "tenant_policies_pkey" PRIMARY KEY ("tenant_id")
);
ALTER TABLE "tenant_policies" ADD CONSTRAINT "tenant_policies_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "project_policies" (
    "project_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "text" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "set_by_key_id" UUID,
    "set_by_name" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "project_policies_pkey" PRIMARY KEY ("project_id")
);
CREATE INDEX "project_policies_tenant_id_idx" ON "project_policies"("tenant_id");
ALTER TABLE "project_policies" ADD CONSTRAINT "project_policies_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every call's decision (allow | forbid | ask; null: no policy in force) and the ids of the policies that
-- determined it. On the partitioned parent, nullable and without a default: no row is rewritten.
ALTER TABLE "invocations" ADD COLUMN "policy_decision" TEXT;
ALTER TABLE "invocations" ADD COLUMN "policy_ids" JSONB;

-- A parked call keeps the role of the key that made it: the policy decides the approved run as that key.
ALTER TABLE "parked_calls" ADD COLUMN "requested_by_role" TEXT;
