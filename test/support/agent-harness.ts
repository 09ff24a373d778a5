import { startLocalAgent, type LocalAgent, type LocalAgentOptions } from '../../scripts/local-agent';
import { devServerAddress, devServerNamespace } from '../temporal-env';

export type Harness = LocalAgent;

/** A real worker and a real scripted LLM server on the dev server shared by the test run. */
export function startHarness(options: Omit<LocalAgentOptions, 'address'> = {}): Promise<Harness> {
  return startLocalAgent({ address: devServerAddress(), namespace: devServerNamespace(), ...options });
}

/** The environment a client process needs to reach this harness's worker. */
export function clientEnvOf(h: Harness): Record<string, string> {
  return { TEMPORAL_ADDRESS: h.env.TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE: h.env.TEMPORAL_NAMESPACE, AGENT_TASK_QUEUE: h.taskQueue };
}
