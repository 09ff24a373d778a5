/**
 * The session workflow's bundle with tracing's workflow interceptors in it (what AgentPlugin's
 * `configureBundler` adds when OTEL_EXPORTER_OTLP_ENDPOINT is set), as a file for worker
 * processes that export traces (AGENT_WORKFLOW_BUNDLE, or `{ codePath }` in a worker main of a
 * test's own). Made once per content of the bundled sources, as the plain bundle is
 * (harness/workflow-bundle-cache.ts, whose key and store it uses), and kept in a folder of its
 * own: without it every such process runs webpack for seconds of both cores at its start.
 */
import { randomUUID } from 'node:crypto';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { PROJECT_ROOT } from '../../harness/temporal-binaries';
import { store, workflowBundleKey } from '../../harness/workflow-bundle-cache';
import { WORKFLOW_INTERCEPTORS_MODULE } from '../../tracing/tracing-worker';
import { WORKFLOWS_PATH } from '../../worker/create-worker';

const CACHE_DIR = path.join(PROJECT_ROOT, 'node_modules', '.cache', 'durable-agent-worker', 'traced-workflow-bundles');
const quietLogger = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };

/** The traced bundle's file for the current sources, bundled and stored first if need be. */
export async function tracedWorkflowBundleFile(): Promise<string> {
  const source = { root: PROJECT_ROOT, workflowsPath: WORKFLOWS_PATH };
  const key = await workflowBundleKey(source);
  const file = path.join(CACHE_DIR, `${key}.js`);
  if (await access(file).then(() => true, () => false)) return file;
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, workflowInterceptorModules: [WORKFLOW_INTERCEPTORS_MODULE], logger: quietLogger });
  // A source edited while webpack read it leaves a bundle of neither content: used this once, never found by the key.
  const stored = (await workflowBundleKey(source)) === key ? file : path.join(CACHE_DIR, `unkeyed-${randomUUID()}.js`);
  await store(CACHE_DIR, stored, code);
  return stored;
}
