/**
 * AGENT_WORKFLOW_BUNDLE: a workflow bundle made once, at build time, that the worker runs
 * as it is instead of bundling `workflows/` with webpack at every start. What encryption and
 * tracing add to a bundle (AgentPlugin's `configureBundler`) must then be in it already: a
 * bundle without encryption's failure converter would write failure messages into history
 * in plain text, one without tracing's workflow module would drop the workflow spans. Either
 * is refused here, in one line, before the worker connects.
 */
import { readFileSync } from 'node:fs';
import type { WorkerOptions } from '@temporalio/worker';
import { ConfigError } from '../config/config-error';

/** Webpack names each module of a bundle by its path; these are the modules each feature adds. */
const NEEDED = [
  { feature: 'encryption', module: /\/encryption\/failure-converter\.[cm]?[jt]s"/, what: 'the failure converter AGENT_ENCRYPTION_KEY needs' },
  { feature: 'tracing', module: /\/@temporalio\/interceptors-opentelemetry\/lib\/workflow-interceptors\.js"/, what: 'the workflow interceptors OTEL_EXPORTER_OTLP_ENDPOINT needs' },
] as const;

export type BundleFeature = (typeof NEEDED)[number]['feature'];

/** The worker's `workflowBundle` for AGENT_WORKFLOW_BUNDLE's file (its readability is checked by worker/config.ts). */
export function prebuiltWorkflowBundle(file: string | undefined, features: ReadonlySet<BundleFeature>): WorkerOptions['workflowBundle'] {
  if (file === undefined) return undefined;
  const needed = NEEDED.filter((need) => features.has(need.feature));
  if (needed.length > 0) {
    const code = readFileSync(file, 'utf8');
    const missing = needed.filter((need) => !need.module.test(code)).map((need) => need.what);
    if (missing.length > 0) {
      throw new ConfigError(`AGENT_WORKFLOW_BUNDLE: the bundle lacks ${missing.join(' and ')}; make it with bundleWorkflowCode({ plugins: [agentPlugin], workflowsPath }) and the same settings (docs/configuration.md)`);
    }
  }
  return { codePath: file };
}
