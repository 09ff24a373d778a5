import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkerOptions } from '@temporalio/worker';
import { Agent } from 'undici';
import { createLlmActivities } from '../../activities/llm/activity';
import { workflowBundle } from '../../harness/local-agent';
import { startScriptedLlm, type ScriptedLlm } from '../../testing/scripted-llm/server';
import { parseWorkerEnv, type WorkerEnv } from '../../worker/config';
import { readWorkerFiles } from '../../worker/config-files';
import { createAgentWorker, logCacheFor } from '../../worker/create-worker';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { AGENT_SEARCH_ATTRIBUTES } from '../../contracts/search-attributes';
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
  /** The environment a session needs to run on the agent's worker. */
  workerEnv: WorkerEnv;
  /**
   * A second worker, on a task queue of its own, for sessions whose worker a test stops
   * mid-call: `restart()` stops it and starts a new one on that queue. A running attempt is
   * cancelled by the shutdown and reported as a worker failure, never through the
   * activity's own ladder, so its retry is one after a LOST attempt.
   *
   * It caches no workflows, so it has no sticky queue: the test server never moves a Query
   * off the sticky queue of a stopped worker (the real server does), and the retried
   * attempt's Query for the session's log would wait for the old worker forever. The main
   * worker keeps its cache, so the ladder's other waits are not slowed by replays.
   */
  restartable: { workerEnv: WorkerEnv; restart(): Promise<void> };
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
  const dispatcher = new Agent();
  const bundle = await workflowBundle();
  const workerEnvFor = (name: string) =>
    // The ladder is provider-independent (the three adapters' retries are proved on the dev
    // server): one provider is enough here. A short shutdown grace: a restart loses the
    // running attempt at once instead of waiting for it.
    parseWorkerEnv({ AGENT_TASK_QUEUE: `${name}-${randomUUID()}`, ANTHROPIC_BASE_URL: llm.url, ANTHROPIC_API_KEY: 'test-anthropic-key', AGENT_SHUTDOWN_GRACE_MS: '100' });

  const start = async (workerEnv: WorkerEnv, overrides: Partial<WorkerOptions> = {}) => {
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
    const worker: Worker = await createAgentWorker({
      connection: env.nativeConnection,
      namespace,
      env: workerEnv,
      dispatcher,
      ...readWorkerFiles(workerEnv, process.env),
      logCache,
      workflowBundle: bundle,
      activityOverrides: { callLlm },
      overrides,
    });
    const running = worker.run();
    return async () => {
      worker.shutdown();
      await running;
    };
  };

  const workerEnv = workerEnvFor('ladder');
  const restartableEnv = workerEnvFor('ladder-restartable');
  const stopMain = await start(workerEnv);
  let stopRestartable = await start(restartableEnv, { maxCachedWorkflows: 0 });
  return {
    env,
    llm,
    workerEnv,
    restartable: {
      workerEnv: restartableEnv,
      async restart() {
        await stopRestartable();
        stopRestartable = await start(restartableEnv, { maxCachedWorkflows: 0 });
      },
    },
    async close() {
      await stopRestartable();
      await stopMain();
      await dispatcher.close();
      await llm.close();
      await env.teardown();
    },
  };
}
