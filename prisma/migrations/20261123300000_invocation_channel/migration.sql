-- The channel a call came through: rest (POST .../invoke) or mcp (tools/call). Rows written before it were REST calls.
ALTER TABLE "invocations" ADD COLUMN "channel" TEXT NOT NULL DEFAULT 'rest';
