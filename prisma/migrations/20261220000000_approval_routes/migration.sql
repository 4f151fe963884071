-- Approval routes (src/approval-routes): where a project's parked calls are announced (a webhook signed per
-- Standard Webhooks, or a Slack incoming webhook), and each announcement as a durable delivery a worker
-- sends with retries. The route's secret is sealed by the service (SECRETS_KEY).
CREATE TABLE "approval_routes" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "secret" TEXT,
    "created_by_key_id" UUID,
    "created_by_name" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "approval_routes_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "approval_routes_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "approval_routes_tenant_id_project_id_idx" ON "approval_routes"("tenant_id", "project_id");

-- One event for one route. `id` is the webhook-id a receiver de-duplicates on; a worker claims due rows with
-- FOR UPDATE SKIP LOCKED and holds them under `lease_until` while it sends, so no two instances send one at once.
CREATE TABLE "approval_deliveries" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "route_id" UUID NOT NULL,
    "event_type" TEXT NOT NULL,
    "invocation_id" UUID NOT NULL,
    -- The event as JSON text, sent byte for byte as stored (jsonb would reorder its keys).
    "payload" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lease_until" TIMESTAMPTZ(3),
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "approval_deliveries_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "approval_deliveries_route_id_fkey" FOREIGN KEY ("route_id") REFERENCES "approval_routes"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "approval_deliveries_status_next_attempt_at_idx" ON "approval_deliveries"("status", "next_attempt_at");
CREATE INDEX "approval_deliveries_route_id_created_at_idx" ON "approval_deliveries"("route_id", "created_at");

-- What a person approves is bound to what runs: the SHA-256 of the parked arguments' canonical JSON, kept
-- after the arguments are dropped.
ALTER TABLE "parked_calls" ADD COLUMN "arguments_digest" TEXT;
