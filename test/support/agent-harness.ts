import { afterAll, beforeAll } from 'vitest';
import { startLocalAgent, type LocalAgent, type LocalAgentOptions } from '../../harness/local-agent';
import { devServerAddress, devServerNamespace } from '../temporal-env';

export type Harness = LocalAgent;
export type HarnessOptions = Omit<LocalAgentOptions, 'address'>;

/** A real worker and a real scripted LLM server on the dev server shared by the test run. */
export function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  return startLocalAgent({ address: devServerAddress(), namespace: devServerNamespace(), ...options });
}

/**
 * One harness for the calling test file: started in a `beforeAll`, closed in an `afterAll`.
 * Options may be computed by that `beforeAll` (from a folder an earlier hook made, say).
 * The accessor throws when called before the harness started, so a test that reaches for
 * it too early says so instead of failing on `undefined`.
 */
export function useAgentHarness(options: HarnessOptions | (() => HarnessOptions) = {}): () => Harness {
  let harness: Harness | undefined;
  beforeAll(async () => {
    harness = await startHarness(typeof options === 'function' ? options() : options);
  });
  afterAll(async () => {
    await harness?.close();
  });
  return () => {
    if (!harness) throw new Error('the agent harness is used before its beforeAll started it');
    return harness;
  };
}

/** The environment a client process needs to reach this harness's worker. */
export function clientEnvOf(h: Harness): Record<string, string> {
  return { TEMPORAL_ADDRESS: h.env.TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE: h.env.TEMPORAL_NAMESPACE, AGENT_TASK_QUEUE: h.taskQueue };
}
