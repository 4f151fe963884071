-- Deleting an API key deletes the state the MCP endpoint keeps for it (src/tenants/api-keys.repository.ts):
-- these indexes find that state by key, which the primary keys (project first) cannot.
CREATE INDEX "mcp_log_levels_api_key_id_idx" ON "mcp_log_levels"("api_key_id");
CREATE INDEX "mcp_client_capabilities_api_key_id_idx" ON "mcp_client_capabilities"("api_key_id");
