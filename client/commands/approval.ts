import { decideApproval } from '../approvals';
import { dim, green, red } from '../output';
import { parseCommandArgs, patiently, printJson, sessionHandle, withClient, type Command } from './command';

function approvalCommand(approved: boolean): Command {
  return {
    name: approved ? 'approve' : 'deny',
    synopsis: approved ? 'approve <id> <callId> [--json]' : 'deny <id> <callId> [--reason TEXT] [--json]',
    summary: approved
      ? 'Approves a tool call that waits for a human (watch shows its call id): it runs. Deciding a call twice is harmless: the second decision changes nothing.'
      : 'Denies a tool call that waits for a human: it does not run, and the model reads "a human denied it: REASON" as its result and goes on.',
    async run(argv, { env }) {
      const { values, positionals } = parseCommandArgs(this, argv, approved ? {} : { reason: { type: 'string' } }, ['<id>', '<callId>']);
      const [id = '', callId = ''] = positionals;
      const reason = 'reason' in values && typeof values.reason === 'string' ? values.reason : undefined;
      return withClient(env, async (client) => {
        const result = await patiently(env, decideApproval(sessionHandle(client, id), { callId, approved, ...(reason === undefined ? {} : { reason }) }));
        if (values.json) printJson({ workflowId: id, ...result });
        else if (!result.applied) console.log(dim(`call ${callId} was already decided (or its approval timed out); nothing changed`));
        else console.log(approved ? `${green('approved')} call ${callId}: it runs now` : `${red('denied')} call ${callId}: the model is told${reason ? `: ${reason}` : ''}`);
        return 0;
      });
    },
  };
}

export const approveCommand = approvalCommand(true);
export const denyCommand = approvalCommand(false);
