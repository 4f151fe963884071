-- Under a root service each tenant's commands run as a uid of its own (src/sandbox/sandbox-uids.ts): taken
-- from SANDBOX_UID_RANGE the first time the tenant runs a command, and kept. The unique index is what
-- keeps two instances from handing one uid to two tenants.
ALTER TABLE "tenants" ADD COLUMN "sandbox_uid" INTEGER;
CREATE UNIQUE INDEX "tenants_sandbox_uid_key" ON "tenants"("sandbox_uid");
