import type { AgentPluginOptions } from 'durable-agent-worker/worker';
import type { FakeModel } from 'durable-agent-worker/testing';

/** The plugin's providers pointed at the fake model; the agent's model is Anthropic's. */
export function fakeProviders(model: FakeModel): AgentPluginOptions['providers'] {
  const { ANTHROPIC_API_KEY: apiKey, ANTHROPIC_BASE_URL: baseUrl } = model.providerEnv();
  return { anthropic: { apiKey, baseUrl } };
}
