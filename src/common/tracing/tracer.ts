import {
  context,
  type Exception,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
} from '@opentelemetry/api';
import { requestPath } from '../format/request-path.js';
import { redactText } from '../secrets/secret-redaction.js';

// Spans go through @opentelemetry/api. Until an SDK is started (OTEL_* variables, see src/tracing) nothing
// here does more than test one boolean: no span object, no context switch, no trace id lookups.
let enabled = false;
let flush: (() => Promise<void>) | null = null;

const tracer = trace.getTracer('toolgate');

// Called once an SDK has registered its tracer provider; `shutdown` flushes it when the app stops.
export function enableTracing(shutdown: () => Promise<void>): void {
  enabled = true;
  flush = shutdown;
}

export const tracingEnabled = (): boolean => enabled;

export async function shutdownTracing(): Promise<void> {
  const shutdown = flush;
  enabled = false;
  flush = null;
  if (shutdown) await shutdown();
}

// The trace id of the span this code runs in, for the audit row and the log lines; null when tracing is off.
export const currentTraceId = (): string | null => currentSpanIds()?.traceId ?? null;

export function currentSpanIds(): { traceId: string; spanId: string } | null {
  if (!enabled) return null;
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext !== undefined && isSpanContextValid(spanContext) ? { traceId: spanContext.traceId, spanId: spanContext.spanId } : null;
}

// Runs `work` in a child span of the current one; an exception marks the span as an error. Off: `work` alone.
export function inSpan<T>(name: string, attributes: Record<string, string | number>, work: () => Promise<T>): Promise<T> {
  if (!enabled) return work();
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work();
    } catch (error) {
      span.recordException(exceptionOf(error));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

// An exception event as a span may keep it: its message and stack trace redacted like a log line (a refusal
// quoting a call's value was redacted with the call's own secrets before it was thrown).
function exceptionOf(error: unknown): Exception {
  if (!(error instanceof Error)) return redactText(String(error));
  return { name: error.name, message: redactText(error.message), ...(error.stack !== undefined && { stack: redactText(error.stack) }) };
}

// The server span of one HTTP request, continuing the caller's trace when it sent a traceparent header.
// Returns the context to run the request in, or null when tracing is off.
// `url` as received: the path is cut from it only when a span is made (nothing is copied with tracing off).
export function startRequestSpan(method: string, url: string, headers: Record<string, unknown>): { span: Span; context: Context } | null {
  if (!enabled) return null;
  const path = requestPath(url);
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': path } }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

// Ends a request span with its route template (never the concrete path: ids stay out of span names).
export function endRequestSpan(span: Span, method: string, route: string | undefined, status: number): void {
  if (route) {
    span.updateName(`${method} ${route}`);
    span.setAttribute('http.route', route);
  }
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

export const runInContext = <T>(ctx: Context, fn: () => T): T => context.with(ctx, fn);
