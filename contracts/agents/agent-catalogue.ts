import { z } from 'zod';
import { ModelRefSchema } from '../model-ref';
import { AgentNameSchema, AgentRecordSchema } from './agent-record';

/**
 * The agents a worker serves, as the `agentCatalogue` workflow answers a client: what
 * `agent agents` lists, and what `startSession` resolves a name with. The client reads it
 * with this schema, as what a worker sends is a trust boundary.
 */

export const AGENT_CATALOGUE_WORKFLOW = 'agentCatalogue';

/** A tool's lane: `by_input` when the call's input decides it (http_request's method, a custom tool's `sideEffects` function). */
export const AgentToolSchema = z.object({
  name: z.string(),
  kind: z.enum(['built-in', 'custom']),
  lane: z.enum(['read_only', 'side_effecting', 'by_input']),
});
export type AgentTool = z.infer<typeof AgentToolSchema>;

export const AgentCatalogueEntrySchema = z.object({
  name: AgentNameSchema,
  description: z.string().optional(),
  model: ModelRefSchema,
  tools: z.array(AgentToolSchema),
  /** MCP servers whose tools the agent is offered; their lanes are the servers' own, learnt when a session lists them. */
  mcp: z.array(z.string()),
  /** What a session started by this agent is given as its input's `agent`. */
  record: AgentRecordSchema,
});
export type AgentCatalogueEntry = z.infer<typeof AgentCatalogueEntrySchema>;

export const AgentCatalogueSchema = z.array(AgentCatalogueEntrySchema);
export type AgentCatalogue = AgentCatalogueEntry[];

export interface AgentCatalogueActivities {
  listAgents(): Promise<AgentCatalogue>;
}
