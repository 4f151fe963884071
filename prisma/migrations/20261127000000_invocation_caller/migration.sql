-- Who made each call: the calling key's id and its name (an OAuth access token is named "<client> (OAuth)").
-- Added on the partitioned parent, the columns reach every partition; nullable and without a default, no
-- row is rewritten. Rows written before have none.
ALTER TABLE "invocations" ADD COLUMN "caller_key_id" UUID;
ALTER TABLE "invocations" ADD COLUMN "caller_name" TEXT;

-- A parked call keeps its caller's name beside its id, for the row its decision writes.
ALTER TABLE "parked_calls" ADD COLUMN "requested_by_name" TEXT;

-- Calls parked before: their requester is known (keys are never renamed), and so is the caller of their rows.
UPDATE "parked_calls" AS p SET "requested_by_name" = k."name"
  FROM "api_keys" AS k WHERE k."id" = p."requested_by_key_id";
UPDATE "invocations" AS i SET "caller_key_id" = p."requested_by_key_id", "caller_name" = p."requested_by_name"
  FROM "parked_calls" AS p
  WHERE i."id" = p."id" AND i."started_at" = p."started_at" AND p."requested_by_key_id" IS NOT NULL;
