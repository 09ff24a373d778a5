import { createRequire } from 'node:module';
import type { WorkerOptions } from '@temporalio/worker';
import type { Tracing } from './tracing-provider';

/**
 * What a worker adds when tracing is on: Temporal's OpenTelemetry interceptors for
 * workflows and activities, and the sink through which workflow spans leave the sandbox.
 * That sink is not called while a workflow replays, and span ids in the sandbox come from
 * its seeded random source, so a replaying worker exports no span twice and a span keeps
 * its id across replays.
 */
export async function workerTracingOptions(tracing: Tracing): Promise<Pick<WorkerOptions, 'interceptors' | 'sinks'>> {
  const otel = await import('@temporalio/interceptors-opentelemetry');
  return {
    interceptors: {
      workflowModules: [WORKFLOW_INTERCEPTORS_MODULE],
      activity: [
        (ctx) => ({
          inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: otel.makeWorkflowExporter(tracing.processor, tracing.resource) },
  };
}

/** The module a workflow bundle must include for workflow spans (bundleWorkflowCode's `workflowInterceptorModules`). */
export const WORKFLOW_INTERCEPTORS_MODULE = createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');
