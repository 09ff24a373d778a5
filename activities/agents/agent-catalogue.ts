import { agentSessionSettings, AgentDefinitionError, type AgentDefinition } from '../../contracts/agents/agent-definition';
import type { AgentCatalogue, AgentCatalogueActivities, AgentCatalogueEntry, AgentTool } from '../../contracts/agents/agent-catalogue';
import type { CustomTool } from '../../contracts/tools/custom-tool';
import { TOOL_NAMES } from '../../contracts/session-settings';
import type { BuiltinToolName } from '../../contracts/tools/registry';

/**
 * The built-in tools' lanes as a person reads them. A tool's `classify` decides per call;
 * the compiler holds this table to the registry, so a new built-in tool needs its entry.
 */
const BUILTIN_LANES = {
  calculator: 'read_only',
  http_request: 'by_input',
  read_file: 'read_only',
  write_file: 'side_effecting',
} as const satisfies Record<BuiltinToolName, AgentTool['lane']>;

/**
 * The worker's agents, checked once when it starts (two agents under one name would make a
 * session's settings depend on list order), and the activity that lists them.
 */
export function createAgentActivities(agents: readonly AgentDefinition[]): AgentCatalogueActivities {
  const catalogue = agentCatalogueOf(agents);
  return {
    listAgents: () => Promise.resolve(catalogue),
  };
}

export function agentCatalogueOf(agents: readonly AgentDefinition[]): AgentCatalogue {
  const names = new Set<string>();
  const catalogue = agents.map((agent) => {
    if (!Object.isFrozen(agent) || typeof agent.name !== 'string') throw new AgentDefinitionError(`worker agents: "${String((agent as Partial<AgentDefinition> | undefined)?.name)}" is not made by defineAgent`);
    if (names.has(agent.name)) throw new AgentDefinitionError(`worker agents: "${agent.name}" is defined twice`);
    names.add(agent.name);
    return entryOf(agent);
  });
  // A sub-agent is started on this worker's task queue: one it does not define would fail every call of it, so the worker refuses to start.
  for (const agent of agents) {
    const missing = agent.agents.find((name) => !names.has(name));
    if (missing !== undefined) throw new AgentDefinitionError(`worker agents: "${agent.name}" is offered agent "${missing}", which this worker does not define`);
    const handedTo = agent.handoffs.find((name) => !names.has(name));
    if (handedTo !== undefined) throw new AgentDefinitionError(`worker agents: "${agent.name}" may hand over to agent "${handedTo}", which this worker does not define`);
  }
  return catalogue;
}

function entryOf(agent: AgentDefinition): AgentCatalogueEntry {
  const builtin = (agent.builtinTools ?? TOOL_NAMES).map((name): AgentTool => ({ name, kind: 'built-in', lane: BUILTIN_LANES[name] }));
  const custom = agent.customTools.map((tool): AgentTool => ({ name: tool.name, kind: 'custom', lane: customLane(tool) }));
  return {
    name: agent.name,
    ...(agent.description === undefined ? {} : { description: agent.description }),
    model: agent.model,
    tools: [...builtin, ...custom],
    mcp: [...agent.mcp],
    record: { name: agent.name, settings: agentSessionSettings(agent) },
  };
}

function customLane(tool: CustomTool): AgentTool['lane'] {
  if (typeof tool.sideEffects === 'function') return 'by_input';
  return tool.sideEffects ? 'side_effecting' : 'read_only';
}
