import { bold, dim } from '../output';
import { forkSession, uiLink } from '../sessions';
import { parseCommandArgs, parseWholeNumber, patiently, printJson, withClient, type Command } from './command';

export const forkCommand: Command = {
  name: 'fork',
  synopsis: 'fork <id> [--at EVENT] [--id NEWID] [--json]',
  summary:
    "Starts a new session from this one's log: all of it, or up to and including event seq EVENT (see log). " +
    'A cut inside a step is repaired by the new session: unanswered tool calls get TOOL_OUTCOME_UNKNOWN or TOOL_NOT_STARTED. ' +
    'From a source that compacted, the new session is given the log from just after the last compaction at or before the cut on (what the model is sent from there), so a fork of a long session starts small; its log keeps the source\'s seqs. ' +
    'The source is left as it is.',
  async run(argv, { env }) {
    const { values, positionals } = parseCommandArgs(this, argv, { at: { type: 'string' }, id: { type: 'string' } }, ['<id>']);
    const [sourceId = ''] = positionals;
    const atSeq = values.at === undefined ? undefined : parseWholeNumber('--at', values.at, 0, Number.MAX_SAFE_INTEGER);
    return withClient(env, async (client) => {
      const fork = await patiently(
        env,
        forkSession(client, env, sourceId, {
          ...(atSeq === undefined ? {} : { atSeq }),
          ...(values.id === undefined ? {} : { workflowId: values.id }),
        }),
      );
      const ui = uiLink(env, fork.workflowId, fork.firstExecutionRunId);
      if (values.json) {
        printJson({ workflowId: fork.workflowId, runId: fork.firstExecutionRunId, ui, forkedFrom: { workflowId: sourceId, ...(atSeq === undefined ? {} : { atSeq }) } });
      } else {
        console.log(`${bold('session')} ${fork.workflowId} ${dim(`forked from ${sourceId}${atSeq === undefined ? '' : ` at event ${atSeq}`}`)}`);
        console.log(`${bold('UI')} ${ui}`);
      }
      return 0;
    });
  },
};
