import type { Client } from '@temporalio/client';
import { listAgents } from '../client/agents';
import type { ClientEnv } from '../client/config';
import type { AgentCatalogue } from '../contracts/agents/agent-catalogue';

/**
 * How long the worker's agent list is kept. Listing runs a workflow on the worker (a few
 * billable actions); the list changes only when the worker is redeployed, and a page
 * that asks for it on every load should not cost actions each time.
 */
const CATALOGUE_TTL_MS = 30_000;

/** The worker's agents as `GET /v1/agents` and `GET /v1/models` list them: one read per 30 s, a failed one not kept. */
export function cachedAgentCatalogue(client: Client, env: Pick<ClientEnv, 'AGENT_TASK_QUEUE'>): () => Promise<AgentCatalogue> {
  let cached: { at: number; agents: Promise<AgentCatalogue> } | undefined;
  return () => {
    if (!cached || Date.now() - cached.at > CATALOGUE_TTL_MS) {
      const agents = listAgents(client, env);
      cached = { at: Date.now(), agents };
      agents.catch(() => (cached = undefined));
    }
    return cached.agents;
  };
}
