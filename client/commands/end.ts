import { requestEnd } from '../end-session';
import { dim, formatCost, green } from '../output';
import { parseCommandArgs, patiently, printJson, sessionHandle, withClient, type Command } from './command';

export const endCommand: Command = {
  name: 'end',
  synopsis: 'end <id> [--json]',
  summary:
    'Ends the session and waits until it has. A turn that is running, and the messages already queued behind it, run to their end first (cancel stops a turn at once); ' +
    'from the end on the session takes no more messages. Prints how many turns and steps it ran and what it spent; --json prints {workflowId, turns, stepsTaken, endedBy, usage, spend}. ' +
    'A session that has already ended is refused, exit code 1.',
  async run(argv, { env }) {
    const { values, positionals } = parseCommandArgs(this, argv, {}, ['<id>']);
    const [id = ''] = positionals;
    return withClient(env, async (client) => {
      const asked = await patiently(env, requestEnd(sessionHandle(client, id)));
      const { waitingFor } = asked;
      if (waitingFor) {
        const behind = waitingFor.queued > 0 ? ` and the ${waitingFor.queued} message${waitingFor.queued === 1 ? '' : 's'} queued behind it` : '';
        console.error(dim(`turn ${waitingFor.turn} of ${id} is running: the session ends once it${behind} has ended (cancel ${id} stops it now)`));
      }
      // A running turn takes as long as it takes: "is a worker running?" would only be said of it.
      const ended = waitingFor ? await asked.ended() : await patiently(env, asked.ended());
      if (values.json) {
        printJson(ended);
        return 0;
      }
      const cost = ended.spend.costUsd === null ? '' : `, ${formatCost(ended.spend.costUsd)}`;
      console.log(`session ${id} ${green('ended')}: ${ended.turns} turn${ended.turns === 1 ? '' : 's'}, ${ended.stepsTaken} step${ended.stepsTaken === 1 ? '' : 's'}${cost}`);
      return 0;
    });
  },
};
