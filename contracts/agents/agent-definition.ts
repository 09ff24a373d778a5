import { z } from 'zod';
import { describeIssues, SessionInputSchema } from '../api';
import { ModelRefSchema } from '../model-ref';
import { McpServerNameSchema } from '../tools/mcp-tools';
import { TOOL_NAMES } from '../session-settings';
import type { CustomTool } from '../tools/custom-tool';
import type { BuiltinToolName } from '../tools/registry';
import { AgentNameSchema } from './agent-record';
import type { OutputSchema } from '../structured-output';
import { OutputSchemaConversionError, outputSchemaOfZod } from '../zod-output-schema';

/**
 * An agent as a worker serves it: a name a session is started by (`start --agent NAME`,
 * `startSession(client, env, { agent: NAME })`), and the session's settings under that
 * name. Pure: the client, the worker and the workflow's contract all load it, and nothing
 * of it runs a tool.
 */

/** The settings an agent may give besides its model, prompt and tools: every one a session's input takes. */
const AgentSettingsSchema = SessionInputSchema.omit({ model: true, system: true, tools: true, mcp: true, customTools: true, continued: true, fork: true, agent: true, agents: true, parent: true, handoffs: true, handoff: true, revision: true }).partial();
export type AgentSettings = Partial<z.input<typeof AgentSettingsSchema>>;

export interface AgentConfig<S extends z.ZodType = z.ZodType> {
  name: string;
  /** What the agent is for, as `agent agents` lists it. */
  description?: string;
  /** `provider:model`, e.g. `anthropic:claude-sonnet-4-5`. */
  model: string;
  /**
   * The models a step goes to, in order, when its call to the one before fails on an
   * overload, a 5xx or the network (docs/fallback.md): the session's `fallbacks`. None when absent.
   */
  fallbacks?: readonly string[];
  system?: string;
  /** Built-in tools by name and custom tools (defineTool) the agent is offered; all built-in ones and no custom one when absent. */
  tools?: readonly (BuiltinToolName | CustomTool)[];
  /** MCP servers of the worker's MCP file whose tools the agent is offered. */
  mcp?: readonly string[];
  /**
   * Agents of the same worker this one is offered as tools, `agent__<name>` (docs/sub-agents.md):
   * a call runs the named agent as a child session. None when absent.
   */
  agents?: readonly string[];
  /**
   * Agents of the same worker this one may hand the conversation over to, `handoff__<name>`
   * (docs/sub-agents.md#handing-the-conversation-over). None when absent.
   */
  handoffs?: readonly string[];
  settings?: AgentSettings;
  /**
   * What every turn's answer must be (docs/structured-output.md): a zod object schema,
   * sent to the session as its JSON Schema (`outputSchema`); `sendAndWait` given the agent
   * returns the value typed by it. Free text when absent.
   */
  output?: S;
}

export interface AgentDefinition<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description?: string;
  readonly model: string;
  readonly system?: string;
  /** The built-in tools it is offered; absent: all of them. */
  readonly builtinTools?: readonly BuiltinToolName[];
  readonly customTools: readonly CustomTool[];
  readonly mcp: readonly string[];
  /** The worker's agents it is offered as tools; the worker refuses to start when one of them it does not define. */
  readonly agents: readonly string[];
  /** The worker's agents it may hand the conversation over to; the worker refuses to start when one of them it does not define. */
  readonly handoffs: readonly string[];
  readonly settings: Readonly<AgentSettings>;
  /** The zod schema of its answers, as given; its JSON Schema is `settings.outputSchema`. */
  readonly output?: S;
}

/** A definition that cannot work: the message is one line naming the agent and what is wrong with it. */
export class AgentDefinitionError extends Error {
  override name = 'AgentDefinitionError';
}

const DescriptionSchema = z.string().max(2_000, { error: 'must be at most 2000 characters' }).optional();
const SystemSchema = SessionInputSchema.shape.system;

/** Checks a definition once, where it is written, and freezes it: a bad one never reaches a worker. */
export function defineAgent<S extends z.ZodType = z.ZodType>(config: AgentConfig<S>): AgentDefinition<S> {
  const name = AgentNameSchema.safeParse(config.name);
  if (!name.success) throw new AgentDefinitionError(`agent ${JSON.stringify(config.name)}: name ${describeIssues(name.error)}`);
  const refuse = (what: string, why: string) => new AgentDefinitionError(`agent "${name.data}": ${what} ${why}`);
  const checked = <T extends z.ZodType>(what: string, schema: T, value: unknown): z.output<T> => {
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw refuse(what, describeIssues(parsed.error));
    return parsed.data;
  };
  checked('model:', ModelRefSchema, config.model);
  checked('description:', DescriptionSchema, config.description);
  checked('system:', SystemSchema, config.system);
  const { builtinTools, customTools } = toolsOf(config.tools, refuse);
  const mcp = [...(config.mcp ?? [])];
  mcp.forEach((server) => checked('mcp:', McpServerNameSchema, server));
  const twice = mcp.find((server, i) => mcp.indexOf(server) !== i);
  if (twice !== undefined) throw refuse('mcp:', `names ${twice} twice`);
  const agents = [...(config.agents ?? [])];
  agents.forEach((agent) => checked('agents:', AgentNameSchema, agent));
  const again = agents.find((agent, i) => agents.indexOf(agent) !== i);
  if (again !== undefined) throw refuse('agents:', `names ${again} twice`);
  const handoffs = [...(config.handoffs ?? [])];
  handoffs.forEach((agent) => checked('handoffs:', AgentNameSchema, agent));
  const doubled = handoffs.find((agent, i) => handoffs.indexOf(agent) !== i);
  if (doubled !== undefined) throw refuse('handoffs:', `names ${doubled} twice`);
  checked('settings:', AgentSettingsSchema.strict(), config.settings ?? {});
  if (config.fallbacks !== undefined) checked('fallbacks:', AgentSettingsSchema.shape.fallbacks, [...config.fallbacks]);
  if (config.fallbacks !== undefined && config.settings?.fallbacks !== undefined) throw refuse('fallbacks:', 'and settings.fallbacks both give the fallback models; give one of them');
  const outputSchema = config.output === undefined ? undefined : outputSchemaOf(config.output, refuse);
  if (outputSchema && config.settings?.outputSchema !== undefined) throw refuse('output:', 'and settings.outputSchema both give the answer\'s schema; give one of them');
  return Object.freeze({
    name: name.data,
    ...(config.description === undefined ? {} : { description: config.description }),
    model: config.model,
    ...(config.system === undefined ? {} : { system: config.system }),
    ...(builtinTools ? { builtinTools: Object.freeze(builtinTools) } : {}),
    customTools: Object.freeze(customTools),
    mcp: Object.freeze(mcp),
    agents: Object.freeze(agents),
    handoffs: Object.freeze(handoffs),
    settings: Object.freeze({ ...config.settings, ...(config.fallbacks ? { fallbacks: [...config.fallbacks] } : {}), ...(outputSchema ? { outputSchema } : {}) }),
    ...(config.output === undefined ? {} : { output: config.output }),
  });
}

/** An agent's zod `output` as its session's `outputSchema`, refused in one line naming the agent. */
function outputSchemaOf(output: z.ZodType, refuse: (what: string, why: string) => AgentDefinitionError): OutputSchema {
  try {
    return outputSchemaOfZod(output);
  } catch (error) {
    if (error instanceof OutputSchemaConversionError) throw refuse('output:', error.message);
    throw error;
  }
}

function toolsOf(tools: AgentConfig['tools'], refuse: (what: string, why: string) => AgentDefinitionError) {
  if (tools === undefined) return { builtinTools: undefined, customTools: [] };
  const builtinTools: BuiltinToolName[] = [];
  const customTools: CustomTool[] = [];
  const seen = new Set<string>();
  for (const tool of tools) {
    // A custom tool as defineTool leaves it: frozen, with its `run`. Checked by shape, as the user's copy of this package may be another.
    const custom = typeof tool === 'object' && tool !== null && typeof tool.name === 'string' && typeof tool.run === 'function' && Object.isFrozen(tool);
    const toolName = typeof tool === 'string' ? tool : custom ? tool.name : undefined;
    if (toolName === undefined) throw refuse('tools:', 'must list built-in tool names and tools made by defineTool');
    if (seen.has(toolName)) throw refuse('tools:', `names ${toolName} twice`);
    seen.add(toolName);
    if (typeof tool !== 'string') customTools.push(tool);
    else if ((TOOL_NAMES as readonly string[]).includes(tool)) builtinTools.push(tool);
    else throw refuse('tools:', `unknown built-in tool ${JSON.stringify(tool)} (built-in tools: ${TOOL_NAMES.join(', ')})`);
  }
  return { builtinTools, customTools };
}

/**
 * The settings a session started by this agent is given (AgentRecord.settings): its
 * input's fields, which the session's own input then overrides one by one.
 */
export function agentSessionSettings(agent: AgentDefinition): Record<string, unknown> {
  return {
    ...agent.settings,
    model: agent.model,
    ...(agent.system === undefined ? {} : { system: agent.system }),
    ...(agent.builtinTools ? { tools: [...agent.builtinTools] } : {}),
    ...(agent.mcp.length > 0 ? { mcp: [...agent.mcp] } : {}),
    ...(agent.agents.length > 0 ? { agents: [...agent.agents] } : {}),
    ...(agent.handoffs.length > 0 ? { handoffs: [...agent.handoffs] } : {}),
    ...(agent.customTools.length > 0 ? { customTools: agent.customTools.map((tool) => tool.name) } : {}),
  };
}
