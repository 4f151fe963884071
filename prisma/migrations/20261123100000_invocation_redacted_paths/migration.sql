-- Which argument values were stored as "[redacted]" (JSON Pointers); null, and free, when none were.
ALTER TABLE "invocations" ADD COLUMN "redacted_paths" JSONB;
