import type { ClientOptions } from '@temporalio/client';
import { tracingConfigFromEnv } from './tracing-config';
import { startTracing, type Tracing } from './tracing-provider';

/** One tracer provider per client process, started by its first connection when an OTLP endpoint is set. */
let started: Promise<Tracing | undefined> | undefined;

/**
 * The client's interceptor: `start` and `send` open a trace, carried to the worker in the
 * Temporal headers, so a turn's spans are children of the `send` that asked for it.
 * Nothing is loaded without an endpoint.
 */
export async function clientTracingOptions(env: NodeJS.ProcessEnv = process.env): Promise<Pick<ClientOptions, 'interceptors'>> {
  started ??= Promise.resolve(tracingConfigFromEnv(env)).then((config) => config && startTracing(config, 'durable-agent-client'));
  if (!(await started)) return {};
  const { OpenTelemetryWorkflowClientInterceptor } = await import('@temporalio/interceptors-opentelemetry');
  return { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } };
}

/** Exports the client's last spans; a CLI command calls it before it exits. */
export async function flushClientTracing(): Promise<void> {
  const tracing = await started;
  await tracing?.processor.forceFlush();
}
