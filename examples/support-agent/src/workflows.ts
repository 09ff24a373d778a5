import type { AgentCatalogueEntry } from 'durable-agent-worker';
import { runAgentTurn } from 'durable-agent-worker/workflows';

// The agent's session (and the catalogue clients resolve agents with), bundled beside the shop's own workflow.
export * from 'durable-agent-worker/workflows';

export interface Ticket {
  id: string;
  question: string;
}

/**
 * A workflow of the shop's own: the support agent answers a ticket in a session started as
 * this workflow's child, with its retries, tools and compensation in that session's
 * history. `agent` is the agent as the worker resolved it for the client (`resolveAgent`).
 */
export async function answerTicket(ticket: Ticket, agent: AgentCatalogueEntry): Promise<string> {
  const { outcome, text } = await runAgentTurn({ model: agent.model, agent: agent.record }, ticket.question);
  return outcome.status === 'completed' ? text : `Ticket ${ticket.id} goes to a person: the agent's turn ${outcome.status}.`;
}
