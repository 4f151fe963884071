-- Decided parked calls go once their outcome is older than a stored answer is kept (IDEMPOTENCY_TTL_HOURS,
-- src/calls/approvals.service.ts): the sweep finds them by status and decision time.
CREATE INDEX "parked_calls_status_decided_at_idx" ON "parked_calls"("status", "decided_at");
