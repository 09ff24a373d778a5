import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { Agent } from 'undici';
import { createLlmActivities } from '../../activities/llm/activity';
import { workflowBundle } from '../../scripts/local-agent';
import { startScriptedLlm, type ScriptedLlm } from '../../scripts/scripted-llm/server';
import { parseWorkerEnv, type WorkerEnv } from '../../worker/config';
import { createAgentWorker, logCacheFor } from '../../worker/create-worker';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { AGENT_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { createTimeSkippingEnv } from '../temporal-env';

/**
 * The agent's real worker on the time-skipping test server: Temporal's waits (the retry
 * ladder's backoff, timers) pass in server time, skipped, so the whole default ladder runs
 * in well under a second of wall time and is measured on the server's clock.
 *
 * The LLM activity's jitter source is pinned (`random`), so every rung's wait is an exact,
 * known number: the test can then read each wait off the server's event times.
 */
export interface TimeSkippingAgent {
  env: TestWorkflowEnvironment;
  llm: ScriptedLlm;
  workerEnv: WorkerEnv;
  /**
   * Stops the worker and starts a new one on the same task queue: a running attempt is
   * cancelled by the shutdown and reported as a worker failure, never through the
   * activity's own ladder, so its retry is one after a LOST attempt.
   */
  restartWorker(): Promise<void>;
  close(): Promise<void>;
}

export async function startTimeSkippingAgent(options: { random: () => number }): Promise<TimeSkippingAgent> {
  const env = await createTimeSkippingEnv();
  const namespace = env.namespace ?? 'default';
  // The test server has no ListSearchAttributes; it accepts the keys being added once.
  await env.connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(AGENT_SEARCH_ATTRIBUTES.map((key) => [key.name, encodeSearchAttributeIndexedValueType(key.type) ?? 0])),
  });
  const llm = await startScriptedLlm();
  // The ladder is provider-independent (the three adapters' retries are proved on the dev
  // server): one provider is enough here.
  // A short shutdown grace: a restart loses the running attempt at once instead of waiting for it.
  const workerEnv = parseWorkerEnv({ AGENT_TASK_QUEUE: `ladder-${randomUUID()}`, ANTHROPIC_BASE_URL: llm.url, ANTHROPIC_API_KEY: 'test-anthropic-key', AGENT_SHUTDOWN_GRACE_MS: '100' });
  const dispatcher = new Agent();
  const logCache = logCacheFor(workerEnv);
  const endpoint = (baseUrl: string, apiKey: string | undefined) => ({ baseUrl, apiKey });
  const { callLlm } = createLlmActivities({
    dispatcher,
    providers: {
      anthropic: endpoint(workerEnv.ANTHROPIC_BASE_URL, workerEnv.ANTHROPIC_API_KEY),
      openai: endpoint(workerEnv.OPENAI_BASE_URL, workerEnv.OPENAI_API_KEY),
      google: endpoint(workerEnv.GEMINI_BASE_URL, workerEnv.GEMINI_API_KEY),
    },
    streamIdleTimeoutMs: workerEnv.AGENT_LLM_IDLE_TIMEOUT_MS,
    logCache,
    random: options.random,
  });
  const bundle = await workflowBundle();
  const start = async () => {
    const worker: Worker = await createAgentWorker({
      connection: env.nativeConnection,
      namespace,
      env: workerEnv,
      dispatcher,
      logCache,
      workflowBundle: bundle,
      activityOverrides: { callLlm },
      // No sticky queues: the test server never moves a Query off the sticky queue of a
      // worker that stopped, so after a restart the activity's Query for the live policy
      // would wait for the old worker forever (the real server falls back to the shared queue).
      overrides: { maxCachedWorkflows: 0 },
    });
    return { worker, running: worker.run() };
  };
  let current = await start();
  const stop = async () => {
    current.worker.shutdown();
    await current.running;
  };
  return {
    env,
    llm,
    workerEnv,
    async restartWorker() {
      await stop();
      current = await start();
    },
    async close() {
      await stop();
      await dispatcher.close();
      await llm.close();
      await env.teardown();
    },
  };
}
