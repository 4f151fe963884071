-- Connections (src/connections): the OAuth authorization servers a tenant's tools reach people's accounts
-- through, and each person's connection to one of them. Client secrets and tokens are sealed by the service.
ALTER TABLE "api_keys" ADD COLUMN "act_as_users" BOOLEAN NOT NULL DEFAULT false;

-- The end user a call was made for (Toolgate-User): "user" is a reserved word, hence end_user.
ALTER TABLE "invocations" ADD COLUMN "end_user" TEXT;

CREATE TABLE "auth_providers" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "metadata" JSONB NOT NULL,
    "discovered" BOOLEAN NOT NULL DEFAULT false,
    "client_id" TEXT NOT NULL,
    "client_secret" TEXT NOT NULL,
    "scopes" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "api_hosts" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "auth_providers_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "auth_providers_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "auth_providers_tenant_id_slug_key" ON "auth_providers"("tenant_id", "slug");

CREATE TABLE "connections" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "provider_id" UUID NOT NULL,
    "end_user" TEXT,
    "status" TEXT NOT NULL,
    "scopes" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "state_hash" BYTEA,
    "code_verifier" TEXT,
    "return_to" TEXT,
    "link_expires_at" TIMESTAMPTZ(3),
    "link_used_at" TIMESTAMPTZ(3),
    "access_token" TEXT,
    "refresh_token" TEXT,
    "token_expires_at" TIMESTAMPTZ(3),
    "refreshing_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "last_used_at" TIMESTAMPTZ(3),
    CONSTRAINT "connections_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "connections_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "connections_provider_id_fkey" FOREIGN KEY ("provider_id") REFERENCES "auth_providers"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "connections_state_hash_key" ON "connections"("state_hash");
CREATE INDEX "connections_tenant_id_provider_id_end_user_status_idx" ON "connections"("tenant_id", "provider_id", "end_user", "status");
