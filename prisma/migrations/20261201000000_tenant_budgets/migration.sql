-- Tenant budgets (src/budgets): the operator's figures for one tenant, overriding the defaults of the
-- TENANT_* settings; a key absent from the object takes the default.
ALTER TABLE "tenants" ADD COLUMN "budgets" JSONB NOT NULL DEFAULT '{}';

-- One row per command running for a tenant, on any instance: admission counts them (and adds up their
-- memory limits) under a lock on the tenant's row. A row outlives its command only when its instance
-- died; it then stops counting at expires_at (the command's timeout and a margin).
CREATE TABLE "command_leases" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "memory_bytes" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "command_leases_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "command_leases_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "command_leases_tenant_id_expires_at_idx" ON "command_leases"("tenant_id", "expires_at");
