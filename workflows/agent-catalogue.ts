import { proxyActivities } from '@temporalio/workflow';
import type { AgentCatalogue, AgentCatalogueActivities } from '../contracts/agents/agent-catalogue';

const { listAgents } = proxyActivities<AgentCatalogueActivities>({ startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 3 } });

/**
 * The agents the worker of this task queue serves: what a client resolves an agent's name
 * with before it starts a session, and what `agent agents` lists. A workflow of one
 * activity, since a client reaches a worker's code only through Temporal.
 */
export async function agentCatalogue(): Promise<AgentCatalogue> {
  return listAgents();
}
