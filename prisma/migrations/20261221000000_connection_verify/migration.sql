-- A provider may name verifyUrl: after the provider's callback the person's browser goes there with a one-time
-- flow id, and the connection stays pending until the tenant's app confirms the same user
-- (POST /v1/connections/verify). Only the flow's SHA-256 is kept.
ALTER TABLE "auth_providers" ADD COLUMN "verify_url" TEXT;

ALTER TABLE "connections" ADD COLUMN "verify_flow_hash" BYTEA;
ALTER TABLE "connections" ADD COLUMN "verify_expires_at" TIMESTAMPTZ(3);
CREATE UNIQUE INDEX "connections_verify_flow_hash_key" ON "connections"("verify_flow_hash");

-- A parked call keeps the end user it was made for (Toolgate-User): approved, it runs as that same person.
ALTER TABLE "parked_calls" ADD COLUMN "end_user" TEXT;

-- What an MCP client declared at initialize (revision 2025-11-25) that later calls depend on: URL-mode
-- elicitation (a tool needing a connection then answers -32042 with the link). A stateless endpoint keeps it
-- per key and project, like the logging level, until the key's next initialize there.
CREATE TABLE "mcp_client_capabilities" (
    "project_id" UUID NOT NULL,
    "api_key_id" TEXT NOT NULL,
    "tenant_id" UUID NOT NULL,
    "url_elicitation" BOOLEAN NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "mcp_client_capabilities_pkey" PRIMARY KEY ("project_id", "api_key_id"),
    CONSTRAINT "mcp_client_capabilities_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
