-- The sweep of connections (src/connections/connections.sweeper.ts) deletes, across tenants, those revoked or
-- expired before a cutoff, and pending ones whose link ran out: this index finds them by status and age
-- instead of reading the whole table every few minutes.
CREATE INDEX "connections_status_updated_at_idx" ON "connections"("status", "updated_at");
