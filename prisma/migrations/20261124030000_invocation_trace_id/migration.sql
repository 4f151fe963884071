-- The OpenTelemetry trace id of the call, when tracing is on (OTEL_* variables); earlier rows have none.
ALTER TABLE "invocations" ADD COLUMN "trace_id" TEXT;
