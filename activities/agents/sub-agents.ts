import { ApplicationFailure } from '@temporalio/activity';
import { TOOL_ERROR_TYPES } from '../../contracts/errors';
import type { AgentDefinition } from '../../contracts/agents/agent-definition';
import { agentCatalogueOf } from './agent-catalogue';
import { agentToolName, type SubAgentActivities, type SubAgentOffer } from '../../contracts/sub-agents';
import { handoffToolName } from '../../contracts/handoffs';

/**
 * The activity that lists a session's sub-agents (`agents`): each named agent of the
 * worker's catalogue as the offer the session records in `tools/listed`. The catalogue is
 * the worker's (agentCatalogueOf), so an offer's record is what a session started by that
 * agent's name would get. A handoff's offer (`handoffs`, contracts/handoffs.ts) is the same
 * record under the tool `handoff__<name>`.
 */
export function createSubAgentActivities(agents: readonly AgentDefinition[]): SubAgentActivities {
  const catalogue = agentCatalogueOf(agents);
  const offers = new Map(catalogue.map((entry): [string, SubAgentOffer] => [entry.name, { name: agentToolName(entry.name), agent: entry.name, description: entry.description ?? `Runs the ${entry.name} agent`, record: entry.record }]));
  return {
    async listSubAgents({ names, handoffs = [] }) {
      const unknown = [...names, ...handoffs].filter((name) => !offers.has(name));
      if (unknown.length > 0) {
        const known = [...offers.keys()].join(', ') || '(none)';
        throw ApplicationFailure.create({
          type: TOOL_ERROR_TYPES.unknownAgent,
          message: `listSubAgents: this worker has no agent ${unknown.map((n) => `"${n}"`).join(', ')}; it has ${known}`,
          nonRetryable: true,
        });
      }
      const handoffOf = (offer: SubAgentOffer): SubAgentOffer => ({ ...offer, name: handoffToolName(offer.agent), kind: 'handoff', description: `Hands the conversation over to ${offer.agent}: ${offer.description}` });
      return [...names.map((name) => offers.get(name) as SubAgentOffer), ...handoffs.map((name) => handoffOf(offers.get(name) as SubAgentOffer))];
    },
  };
}
