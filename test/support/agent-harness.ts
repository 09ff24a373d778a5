import { startLocalAgent, type LocalAgent, type LocalAgentOptions } from '../../scripts/local-agent';
import { devServerAddress, devServerNamespace } from '../temporal-env';

export type Harness = LocalAgent;

/** A real worker and a real scripted LLM server on the dev server shared by the test run. */
export function startHarness(options: Omit<LocalAgentOptions, 'address'> = {}): Promise<Harness> {
  return startLocalAgent({ address: devServerAddress(), namespace: devServerNamespace(), ...options });
}
