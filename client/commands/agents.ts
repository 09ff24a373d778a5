import { listAgents } from '../agents';
import { bold, dim } from '../output';
import { parseCommandArgs, patiently, printJson, withClient, type Command } from './command';

export const agentsCommand: Command = {
  name: 'agents',
  synopsis: 'agents [--json]',
  summary:
    "Lists the agents the worker of this client's task queue (AGENT_TASK_QUEUE) serves (defineAgent, docs/agents.md): each one's model, its tools with their lanes " +
    '(read_only: in parallel and retried; side_effecting: alone, in call order, once; by_input: the call decides) and its MCP servers. Start one with start --agent NAME. ' +
    '--json prints [{name, description?, model, tools: [{name, kind, lane}], mcp, record}].',
  async run(argv, { env }) {
    const { values } = parseCommandArgs(this, argv, {}, []);
    return withClient(env, async (client) => {
      const agents = await patiently(env, listAgents(client, env));
      if (values.json) {
        printJson(agents);
        return 0;
      }
      if (agents.length === 0) console.log(dim(`the worker of task queue ${env.AGENT_TASK_QUEUE} serves no agents`));
      for (const agent of agents) {
        console.log(`${bold(agent.name)} ${agent.model}${agent.description ? dim(` · ${agent.description}`) : ''}`);
        console.log(`  tools ${agent.tools.map((tool) => `${tool.name} (${tool.kind === 'custom' ? 'custom, ' : ''}${tool.lane})`).join(', ') || dim('none')}`);
        if (agent.mcp.length > 0) console.log(`  mcp   ${agent.mcp.join(', ')}`);
      }
      return 0;
    });
  },
};
