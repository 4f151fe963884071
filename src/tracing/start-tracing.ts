import type { AppConfig } from '../config/app-config.js';
import { enableTracing } from '../common/tracing/tracer.js';

// Starts the OpenTelemetry SDK when OTEL_TRACES_EXPORTER or an OTLP endpoint asks for it (see loadConfig).
// The SDK packages are imported here and only here, dynamically: a service without OTEL_* loads none of
// them, and its spans are the API's no-op (src/common/tracing/tracer.ts skips even those).
// The exporter reads the rest of the standard variables itself (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*, OTEL_TRACES_SAMPLER ...).
export async function startTracing(tracing: AppConfig['tracing']): Promise<boolean> {
  if (tracing.exporter === 'none') return false;
  const [
    { NodeTracerProvider },
    { BatchSpanProcessor, ConsoleSpanExporter },
    { resourceFromAttributes, defaultResource, detectResources, envDetector },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
  ]);
  const exporter =
    tracing.exporter === 'console'
      ? new ConsoleSpanExporter()
      : new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME?.trim() || 'toolgate' }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  // Registers the provider, the AsyncLocalStorage context manager and the W3C traceparent propagator.
  provider.register();
  enableTracing(() => provider.shutdown());
  return true;
}
