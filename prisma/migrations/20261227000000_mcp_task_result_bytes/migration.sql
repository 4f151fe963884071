-- The size of a task's kept result, as its JSON text: the storedAnswerBytes budget sums it for each of the
-- tenant's checks, which reading the jsonb itself (turned into text row by row) would make cost as much
-- as the results held.
ALTER TABLE "mcp_tasks" ADD COLUMN "result_bytes" INTEGER NOT NULL DEFAULT 0;
UPDATE "mcp_tasks" SET "result_bytes" = octet_length("result"::text) WHERE "result" IS NOT NULL;
