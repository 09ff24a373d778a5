import { bold, dim } from '../output';
import { startSession, uiLink } from '../sessions';
import { parseCommandArgs, printJson, withClient, type Command } from './command';
import { SESSION_OPTIONS, SESSION_OPTIONS_HELP, SESSION_SYNOPSIS, sessionOptionsFrom } from './session-options';

export const startCommand: Command = {
  name: 'start',
  synopsis: `start ${SESSION_SYNOPSIS} [--json]`,
  summary: `Creates a session and prints its id and its Temporal UI link. The session waits for messages (send) and ends by itself when idle (--idle-timeout).\n\n${SESSION_OPTIONS_HELP}`,
  async run(argv, { env }) {
    const { values } = parseCommandArgs(this, argv, SESSION_OPTIONS, []);
    const options = sessionOptionsFrom(values, env);
    return withClient(env, async (client) => {
      const handle = await startSession(client, env, options);
      const ui = uiLink(env, handle.workflowId, handle.firstExecutionRunId);
      if (values.json) {
        printJson({ workflowId: handle.workflowId, runId: handle.firstExecutionRunId, ui });
      } else {
        console.log(`${bold('session')} ${handle.workflowId}`);
        console.log(`${bold('UI')} ${ui}`);
        console.log(dim(`next: npm run client -- send ${handle.workflowId} "your message" --wait`));
      }
      return 0;
    });
  },
};
