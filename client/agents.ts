import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { AGENT_CATALOGUE_WORKFLOW, AgentCatalogueSchema, type AgentCatalogue, type AgentCatalogueEntry } from '../contracts/agents/agent-catalogue';
import type { agentCatalogue } from '../workflows/agent-catalogue';
import { describeIssues } from '../contracts/api';
import type { ClientEnv } from './config';
import { ConfigError } from '../config/config-error';

/**
 * How long a client waits for the worker to list its agents. The list is in the worker's
 * memory, so a worker answers in milliseconds; a wait this long means none polls the task
 * queue, and saying so beats waiting forever.
 */
const CATALOGUE_TIMEOUT = '20 seconds';

/** An agent name the worker does not serve: refused before any session starts, with the names it does serve. */
export class UnknownAgentError extends ConfigError {
  override name = 'UnknownAgentError';
}

/** The agents the worker of the task queue serves, with their tools and lanes: what `agent agents` lists. */
export async function listAgents(client: Client, env: Pick<ClientEnv, 'AGENT_TASK_QUEUE'>): Promise<AgentCatalogue> {
  let answer: unknown;
  try {
    answer = await client.workflow.execute<typeof agentCatalogue>(AGENT_CATALOGUE_WORKFLOW, {
      taskQueue: env.AGENT_TASK_QUEUE,
      workflowId: `agent-catalogue-${randomUUID()}`,
      workflowExecutionTimeout: CATALOGUE_TIMEOUT,
      staticSummary: 'agent catalogue',
    });
  } catch (error) {
    if (error instanceof WorkflowFailedError) throw new Error(`the worker of task queue ${env.AGENT_TASK_QUEUE} did not list its agents within ${CATALOGUE_TIMEOUT}: ${error.cause?.message ?? error.message}`);
    throw error;
  }
  const parsed = AgentCatalogueSchema.safeParse(answer);
  if (!parsed.success) throw new Error(`the worker of task queue ${env.AGENT_TASK_QUEUE} listed its agents in a form this client does not read: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** The worker's agent of this name, or an UnknownAgentError that names the ones it serves. */
export async function resolveAgent(client: Client, env: Pick<ClientEnv, 'AGENT_TASK_QUEUE'>, name: string): Promise<AgentCatalogueEntry> {
  const agents = await listAgents(client, env);
  const agent = agents.find((entry) => entry.name === name);
  if (agent) return agent;
  const known = agents.length > 0 ? `it serves ${agents.map((entry) => entry.name).join(', ')}` : 'it serves none (register them with createAgentWorker({ agents }) or AgentPlugin)';
  throw new UnknownAgentError(`unknown agent ${JSON.stringify(name)}: the worker of task queue ${env.AGENT_TASK_QUEUE} does not serve it; ${known}`);
}
