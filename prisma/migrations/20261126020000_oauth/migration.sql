-- MCP sign-in with OAuth 2.1 (src/oauth). An access token is an agent key (api_keys) issued under a consent.
CREATE TABLE "oauth_clients" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "redirect_uris" TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "oauth_clients_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "oauth_requests" (
    "id" UUID NOT NULL,
    "client_id" TEXT NOT NULL,
    "client_name" TEXT NOT NULL,
    "client_origin" TEXT,
    "redirect_uri" TEXT NOT NULL,
    "state" TEXT,
    "code_challenge" TEXT NOT NULL,
    "resource" TEXT NOT NULL,
    "project_id" UUID NOT NULL,
    "scope" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "decided_at" TIMESTAMPTZ(3),
    "code_hash" BYTEA,
    "code_used_at" TIMESTAMPTZ(3),
    "grant_id" UUID,

    CONSTRAINT "oauth_requests_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "oauth_requests_code_hash_key" ON "oauth_requests"("code_hash");
CREATE INDEX "oauth_requests_expires_at_idx" ON "oauth_requests"("expires_at");

CREATE TABLE "oauth_grants" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "client_id" TEXT NOT NULL,
    "client_name" TEXT NOT NULL,
    "resource" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "tools" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "decided_by_key_id" UUID NOT NULL,
    -- admin or approver: an approver lends no power to call tools, so every call of its client parks.
    "decided_by_role" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "oauth_grants_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "oauth_grants_tenant_id_idx" ON "oauth_grants"("tenant_id");
ALTER TABLE "oauth_grants" ADD CONSTRAINT "oauth_grants_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "oauth_refresh_tokens" (
    "id" UUID NOT NULL,
    "grant_id" UUID NOT NULL,
    "token_hash" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),

    CONSTRAINT "oauth_refresh_tokens_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "oauth_refresh_tokens_token_hash_key" ON "oauth_refresh_tokens"("token_hash");
CREATE INDEX "oauth_refresh_tokens_grant_id_idx" ON "oauth_refresh_tokens"("grant_id");
ALTER TABLE "oauth_refresh_tokens" ADD CONSTRAINT "oauth_refresh_tokens_grant_id_fkey" FOREIGN KEY ("grant_id") REFERENCES "oauth_grants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- An access token is an agent key issued under a grant, accepted only at its resource (a project's MCP URL).
ALTER TABLE "api_keys" ADD COLUMN "oauth_grant_id" UUID;
ALTER TABLE "api_keys" ADD COLUMN "oauth_resource" TEXT;
-- Every call of this key waits for a person's approval, whatever the project's approvalRequired says.
ALTER TABLE "api_keys" ADD COLUMN "parks_every_call" BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX "api_keys_oauth_grant_id_idx" ON "api_keys"("oauth_grant_id");
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_oauth_grant_id_fkey" FOREIGN KEY ("oauth_grant_id") REFERENCES "oauth_grants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
