import { dim } from '../output';
import { formatTools, sessionTools } from '../session-tools';
import { parseCommandArgs, patiently, printJson, sessionHandle, withClient, type Command } from './command';

export const toolsCommand: Command = {
  name: 'tools',
  synopsis: 'tools <id> [--json]',
  summary:
    'Lists the tools the session offers its model, each with its lane: read-only (parallel, retried) or side-effecting (alone, in call order, one attempt). ' +
    'MCP and custom tools (defineTool, marked "(custom)") are those its log recorded at its start or at its last refresh-tools.',
  async run(argv, { env }) {
    const { values, positionals } = parseCommandArgs(this, argv, {}, ['<id>']);
    const [id = ''] = positionals;
    return withClient(env, async (client) => {
      const tools = await patiently(env, sessionTools(sessionHandle(client, id)));
      if (values.json) {
        printJson({ workflowId: id, tools });
        return 0;
      }
      for (const line of formatTools(tools)) console.log(line);
      if (tools.length === 0) console.log(dim('(no tools)'));
      return 0;
    });
  },
};
