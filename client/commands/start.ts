import { bold, dim, yellow } from '../output';
import { startSession, startSessionWithMessage, uiLink } from '../sessions';
import { parseCommandArgs, patiently, printJson, withClient, type Command } from './command';
import { SESSION_OPTIONS, SESSION_OPTIONS_HELP, SESSION_SYNOPSIS, sessionOptionsFrom } from './session-options';

export const startCommand: Command = {
  name: 'start',
  synopsis: `start ${SESSION_SYNOPSIS} [--prompt TEXT] [--json]`,
  summary:
    'Creates a session and prints its id and its Temporal UI link. The session waits for messages (send) and ends by itself when idle (--idle-timeout). ' +
    'With --prompt the first message goes with the start, in the same request, and start returns once the session has accepted it (--json adds its updateId); follow the turn with watch.\n\n' +
    SESSION_OPTIONS_HELP,
  async run(argv, { env }) {
    const { values } = parseCommandArgs(this, argv, { ...SESSION_OPTIONS, prompt: { type: 'string' } }, []);
    const options = { ...sessionOptionsFrom(values, env), onNotice: (line: string) => console.error(yellow(line)) };
    return withClient(env, async (client) => {
      const { handle, updateId } =
        values.prompt === undefined
          ? { handle: await startSession(client, env, options), updateId: undefined }
          : await patiently(env, startSessionWithMessage(client, env, options, values.prompt));
      const ui = uiLink(env, handle.workflowId, handle.firstExecutionRunId);
      if (values.json) {
        printJson({ workflowId: handle.workflowId, runId: handle.firstExecutionRunId, ui, ...(updateId ? { updateId } : {}) });
      } else {
        console.log(`${bold('session')} ${handle.workflowId}`);
        console.log(`${bold('UI')} ${ui}`);
        console.log(dim(updateId ? `sent; follow it with: npm run client -- watch ${handle.workflowId}` : `next: npm run client -- send ${handle.workflowId} "your message" --wait`));
      }
      return 0;
    });
  },
};
