import { refreshToolsUpdate, stateQuery } from '../../contracts/api';
import { dim } from '../output';
import { formatTools, mcpTools } from '../session-tools';
import { parseCommandArgs, patiently, printJson, sessionHandle, withClient, type Command } from './command';

export const refreshToolsCommand: Command = {
  name: 'refresh-tools',
  synopsis: 'refresh-tools <id> [--json]',
  summary:
    "Lists the tools of the session's MCP servers again and records the new list in its log: LLM calls from then on offer it, " +
    'while replays and retries of earlier calls keep the list they were made with. Prints the new MCP tools with their lanes.',
  async run(argv, { env }) {
    const { values, positionals } = parseCommandArgs(this, argv, {}, ['<id>']);
    const [id = ''] = positionals;
    return withClient(env, async (client) => {
      const handle = sessionHandle(client, id);
      const list = await patiently(env, handle.executeUpdate(refreshToolsUpdate));
      const tools = mcpTools(list, (await handle.query(stateQuery)).settings.approvalRequired);
      if (values.json) {
        printJson({ workflowId: id, servers: list.servers, tools });
        return 0;
      }
      console.log(dim(`${tools.length} MCP tools from ${list.servers.join(', ')}`));
      for (const line of formatTools(tools)) console.log(line);
      return 0;
    });
  },
};
