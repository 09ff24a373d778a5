import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TracingConfig } from './tracing-config';
import { withoutFailureMessages } from './tracing-redaction';

/** A registered OpenTelemetry tracer provider: the process's spans go to the configured collector. */
export interface Tracing {
  readonly config: TracingConfig;
  /** Also given to the workflow span sink, so workflow spans are batched and exported with the rest. */
  readonly processor: SpanProcessor;
  readonly resource: Resource;
  /** Exports what is still batched and stops; call before the process exits. */
  shutdown(): Promise<void>;
}

/**
 * Registers the OpenTelemetry Node SDK as the global tracer provider. Loaded only when
 * tracing is on, so a process without an endpoint pays nothing for it. The sampler comes
 * from `OTEL_TRACES_SAMPLER` (read by the SDK), the service name from `OTEL_SERVICE_NAME`
 * or, without it, `defaultServiceName`.
 */
export async function startTracing(config: TracingConfig, defaultServiceName: string): Promise<Tracing> {
  const [api, { NodeTracerProvider }, { BatchSpanProcessor }, resources] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
  ]);
  const exporter = await exporterFor(config);
  const resource = resources.Resource.default()
    .merge(new resources.Resource({ 'service.name': defaultServiceName }))
    .merge(resources.envDetectorSync.detect());
  const batch = new BatchSpanProcessor(exporter);
  const processor = config.redactFailures ? withoutFailureMessages(batch) : batch;
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  // A collector that refuses or cannot be reached loses spans: say so on stderr rather than
  // silently, which is what the SDK does without a logger.
  api.diag.setLogger(new api.DiagConsoleLogger(), api.DiagLogLevel.WARN);
  return { config, processor, resource, shutdown: () => provider.shutdown() };
}

async function exporterFor(config: TracingConfig) {
  // The exporters read headers, timeouts and compression from the other OTEL_EXPORTER_OTLP_* variables.
  if (config.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter({ url: config.endpoint });
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter({ url: config.endpoint });
}
