import { formatEvent, green, red } from '../output';
import { readLatestRunLog, readLog, type SessionHandle } from '../sessions';
import type { SessionEvent } from '../../contracts/session-log';
import { cancelTurn } from '../turn-control';
import { parseCommandArgs, patiently, printJson, sessionHandle, withClient, type Command } from './command';

export const cancelCommand: Command = {
  name: 'cancel',
  synopsis: 'cancel <id> [--json]',
  summary:
    'Cancels the running turn: the abort path. Nothing is retried; tool calls it started get TOOL_OUTCOME_UNKNOWN, calls it never started TOOL_NOT_STARTED, ' +
    'and the session stays open for the next message. Waits until the turn has closed, then prints those results.',
  async run(argv, { env }) {
    const { values, positionals } = parseCommandArgs(this, argv, {}, ['<id>']);
    const [id = ''] = positionals;
    return withClient(env, async (client) => {
      const handle = sessionHandle(client, id);
      const result = await patiently(env, cancelTurn(handle));
      const compensated = result.turn === undefined
        ? []
        : (await turnEvents(handle, result.turn)).filter((e) => e.type === 'tool/result' && (e.code === 'TOOL_OUTCOME_UNKNOWN' || e.code === 'TOOL_NOT_STARTED'));
      if (values.json) {
        printJson({
          workflowId: id,
          cancelled: result.cancelled,
          ...(result.turn === undefined ? {} : { turn: result.turn }),
          ...(result.outcome ? { status: result.outcome.status, ...(result.outcome.failure ? { failure: result.outcome.failure } : {}) } : {}),
          compensated: compensated.flatMap((e) => (e.type === 'tool/result' ? [{ callId: e.callId, name: e.name, code: e.code }] : [])),
        });
        return 0;
      }
      if (!result.cancelled) {
        console.log(`no turn of ${id} is running: nothing to cancel`);
        return 0;
      }
      const status = result.outcome?.status ?? 'cancelled';
      console.log(`turn ${result.turn} ${status === 'cancelled' ? green(status) : red(`${status} (it ended before the cancellation reached it)`)}`);
      for (const event of compensated) console.log(formatEvent(event));
      return 0;
    });
  },
};

/**
 * The events of the turn just cancelled, from the latest run, which holds its running turn.
 * Only when the session continued as new right after the turn, compacting it away from the
 * tail it carried, are the earlier runs read.
 */
async function turnEvents(handle: SessionHandle, turn: number): Promise<SessionEvent[]> {
  const latest = (await readLatestRunLog(handle)).events;
  const events = latest.some((e) => e.type === 'turn/start' && e.turn === turn) ? latest : await readLog(handle);
  return events.filter((e) => 'turn' in e && e.turn === turn);
}
