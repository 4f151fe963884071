-- What each tenant's answers stored under Idempotency-Keys come to, kept by triggers on idempotency_keys as
-- rows are written, taken over and deleted (by the sweep, or with their project). The storedAnswerBytes
-- budget is checked twice per keyed call; summing every row the tenant holds made each check cost as many
-- rows as the tenant had stored (a million small answers fit in the default budget), so one tenant could
-- spend the database's CPU for every other. Expired rows count until the sweep deletes them (each minute).
-- No foreign key: a tenant's deletion deletes its rows, whose triggers then write here.
CREATE TABLE "tenant_stored_answers" (
    "tenant_id" UUID NOT NULL,
    "bytes" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "tenant_stored_answers_pkey" PRIMARY KEY ("tenant_id")
);

-- One statement's change, summed by tenant (octet_length reads a stored text's size without decompressing
-- it); tenants in order, so two statements changing the same tenants never wait for each other in a cycle.
CREATE FUNCTION "tenant_stored_answers_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO tenant_stored_answers AS t (tenant_id, bytes)
      SELECT tenant_id, sum(octet_length(outcome)) FROM new_rows WHERE outcome IS NOT NULL
      GROUP BY tenant_id ORDER BY tenant_id
    ON CONFLICT (tenant_id) DO UPDATE SET bytes = t.bytes + EXCLUDED.bytes;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO tenant_stored_answers AS t (tenant_id, bytes)
      SELECT tenant_id, -sum(octet_length(outcome)) FROM old_rows WHERE outcome IS NOT NULL
      GROUP BY tenant_id ORDER BY tenant_id
    ON CONFLICT (tenant_id) DO UPDATE SET bytes = t.bytes + EXCLUDED.bytes;
  ELSE
    INSERT INTO tenant_stored_answers AS t (tenant_id, bytes)
      SELECT tenant_id, sum(bytes) FROM (
        SELECT tenant_id, coalesce(octet_length(outcome), 0) AS bytes FROM new_rows
        UNION ALL
        SELECT tenant_id, -coalesce(octet_length(outcome), 0) FROM old_rows
      ) AS changed
      GROUP BY tenant_id HAVING sum(bytes) <> 0 ORDER BY tenant_id
    ON CONFLICT (tenant_id) DO UPDATE SET bytes = t.bytes + EXCLUDED.bytes;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "idempotency_keys_stored_insert" AFTER INSERT ON "idempotency_keys"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tenant_stored_answers_change();
CREATE TRIGGER "idempotency_keys_stored_update" AFTER UPDATE ON "idempotency_keys"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tenant_stored_answers_change();
CREATE TRIGGER "idempotency_keys_stored_delete" AFTER DELETE ON "idempotency_keys"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION tenant_stored_answers_change();

INSERT INTO tenant_stored_answers (tenant_id, bytes)
  SELECT tenant_id, sum(octet_length(outcome)) FROM idempotency_keys WHERE outcome IS NOT NULL GROUP BY tenant_id;
