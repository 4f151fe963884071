-- MCP logging (src/mcp/mcp-log-levels.ts): the level a client set with logging/setLevel. A stateless
-- endpoint has no session to keep it in, so it is kept per key and project, where every instance reads it,
-- until the key's next initialize in that project (a new session starts without one) or the next setLevel.
CREATE TABLE "mcp_log_levels" (
    "project_id" UUID NOT NULL,
    "api_key_id" TEXT NOT NULL,
    "tenant_id" UUID NOT NULL,
    "level" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "mcp_log_levels_pkey" PRIMARY KEY ("project_id", "api_key_id"),
    CONSTRAINT "mcp_log_levels_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
