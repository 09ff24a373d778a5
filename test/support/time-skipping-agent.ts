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
  const workerEnv = parseWorkerEnv({ AGENT_TASK_QUEUE: `ladder-${randomUUID()}`, ANTHROPIC_BASE_URL: llm.url, ANTHROPIC_API_KEY: 'test-anthropic-key' });
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
  const worker: Worker = await createAgentWorker({
    connection: env.nativeConnection,
    namespace,
    env: workerEnv,
    dispatcher,
    logCache,
    workflowBundle: await workflowBundle(),
    activityOverrides: { callLlm },
  });
  const running = worker.run();
  return {
    env,
    llm,
    workerEnv,
    async close() {
      worker.shutdown();
      await running;
      await dispatcher.close();
      await llm.close();
      await env.teardown();
    },
  };
}
