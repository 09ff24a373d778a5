import { childPointer, dim, formatEvent } from '../output';
import { stateQuery } from '../../contracts/api';
import { readLog } from '../sessions';
import { parseCommandArgs, patiently, printJson, sessionHandle, withClient, type Command } from './command';

export const logCommand: Command = {
  name: 'log',
  synopsis: 'log <id> [--json]',
  summary:
    'Prints the session log, one event per line with its seq (the EVENT that fork --at takes), all of it: also the events of the runs before the latest, ' +
    'read from each run the session continued as new from. A compaction shows as one line, "turn N · compact · T1 → T2 tokens (through event S)"; the events it summarised stay in the log. ' +
    'A sub-agent\'s call and its result point at the child session that ran it ("→ session ID"), the result with what the child spent and, when it failed, its failure type (docs/sub-agents.md). ' +
    '--json prints the events as a JSON array, exactly as the session keeps them.',
  async run(argv, { env }) {
    const { values, positionals } = parseCommandArgs(this, argv, {}, ['<id>']);
    const [id = ''] = positionals;
    return withClient(env, async (client) => {
      const handle = sessionHandle(client, id);
      const events = await patiently(env, readLog(handle));
      if (values.json) {
        printJson(events);
        return 0;
      }
      const firstSeq = events[0]?.seq ?? 0;
      if (firstSeq > 0) {
        // A fork is given its source's log from the last compaction before the cut on: the rest is the source's.
        const { forkedFrom } = await patiently(env, handle.query(stateQuery));
        const source = forkedFrom ? ` are in ${forkedFrom.workflowId}, which this session was forked from` : ' are not in this session';
        console.log(dim(`(the log starts at event ${firstSeq}: the events before it${source})`));
      }
      const width = String(events.at(-1)?.seq ?? 0).length;
      // A sub-agent's result points at its child session as its call does: the answer is read there in full.
      const children = new Map<string, string>();
      for (const event of events) {
        const call = 'callId' in event ? `${event.turn}/${event.step}/${event.callId}` : undefined;
        if (event.type === 'tool/call' && event.child && call) children.set(call, event.child.workflowId);
        const child = event.type === 'tool/result' && call ? children.get(call) : undefined;
        // Every event, also the ones `watch` leaves out, so `fork --at` can name any of them.
        console.log(`${dim(String(event.seq).padStart(width))}  ${formatEvent(event, true) ?? event.type}${child ? ` ${childPointer(child)}` : ''}`);
      }
      if (events.length === 0) console.log(dim('(no events yet)'));
      return 0;
    });
  },
};
