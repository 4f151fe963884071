-- The stored answers of calls made with an Idempotency-Key, one per tenant, project and key. A row is
-- 'running' while its first request runs (until locked_until, after which a retry of the same call may take
-- it over) and 'done' once the answer is stored (as JSON text, so a replay sends the same bytes). Rows past expires_at count as absent and are deleted in
-- batches by a periodic sweep (the expires_at index), never on the request path.
CREATE TABLE "idempotency_keys" (
    "tenant_id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "outcome" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_until" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("tenant_id", "project_id", "key")
);

CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys"("expires_at");

ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
