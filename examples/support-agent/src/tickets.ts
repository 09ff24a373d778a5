import type { Client } from '@temporalio/client';
import { resolveAgent } from 'durable-agent-worker/client';
import type { answerTicket, Ticket } from './workflows.js';

/** Opens a ticket and resolves with the agent's answer: the worker of `taskQueue` resolves the agent by name, the workflow asks it. */
export async function submitTicket(client: Client, taskQueue: string, ticket: Ticket): Promise<string> {
  const support = await resolveAgent(client, { AGENT_TASK_QUEUE: taskQueue }, 'support');
  return client.workflow.execute<typeof answerTicket>('answerTicket', { taskQueue, workflowId: `ticket-${ticket.id}`, args: [ticket, support] });
}
