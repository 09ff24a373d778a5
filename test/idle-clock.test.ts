/**
 * The idle timeout of a session of revision 2 (contracts/session-revision.ts,
 * workflows/idle-clock.ts) keeps one timer across its waits instead of starting one per wait,
 * and still ends the session exactly `idleTimeoutMs` after its last turn. On the
 * time-skipping test server, whose clock the history's event times are read from: a minute
 * of idling passes in well under a second.
 */
import type { temporal } from '@temporalio/proto';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendAndWait, startSession } from '../client/sessions';
import type { SessionRevision } from '../contracts/session-revision';
import { startTimeSkippingAgent, type TimeSkippingAgent } from './support/time-skipping-agent';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const IDLE_MS = 60_000;
const GAP_MS = 20_000;
/** A timer never fires early; the turns' own real time and the server's rounding, at most this late. */
const LATE_MS = 2_000;

let a: TimeSkippingAgent;
beforeAll(async () => {
  a = await startTimeSkippingAgent({ random: () => 0.5 });
});
afterAll(async () => {
  await a?.close();
});

/** Three one-step turns 20 s apart (server time), then idle until the session ends by itself. */
async function threeTurnsThenIdle(revision: SessionRevision) {
  const model = `idle-clock-${revision}`;
  a.llm.script(model, ...[1, 2, 3].map((n) => ({ kind: 'text' as const, text: `answer ${n}` })));
  const session = await startSession(a.env.client, a.workerEnv, { model: `anthropic:${model}`, idleTimeoutMs: IDLE_MS, revision });
  for (const text of ['one', 'two', 'three']) {
    expect((await sendAndWait(session, text)).status).toBe('completed');
    if (text !== 'three') await a.env.sleep(GAP_MS);
  }
  const result = await session.result();
  const events = (await session.fetchHistory()).events ?? [];
  return { result, events };
}

const timeOf = (e: HistoryEvent | undefined) => optionalTsToMs(e?.eventTime) ?? Number.NaN;

describe('a session\'s idle timeout', () => {
  it('keeps one timer across the waits between turns that come sooner than the timeout, and ends the timeout after the last turn', async () => {
    const { result, events } = await threeTurnsThenIdle(2);
    expect(result).toMatchObject({ turns: 3, endedBy: 'idle_timeout' });
    const timers = events.filter((e) => e.timerStartedEventAttributes);
    // The one started when the session first waited, and, when it fired, one for the rest of the last wait.
    expect(timers).toHaveLength(2);
    expect(events.filter((e) => e.timerCanceledEventAttributes)).toHaveLength(0);
    const lastTurnEnded = timeOf(events.filter((e) => e.workflowExecutionUpdateCompletedEventAttributes).at(-1));
    const closed = timeOf(events.at(-1));
    expect(closed - lastTurnEnded).toBeGreaterThanOrEqual(IDLE_MS);
    expect(closed - lastTurnEnded).toBeLessThanOrEqual(IDLE_MS + LATE_MS);
  });

  it('started one timer per wait in the first revision, each cancelled by the next message', async () => {
    // What a session started without a revision (an earlier client's) still does: its history replays.
    const { result, events } = await threeTurnsThenIdle(1);
    expect(result).toMatchObject({ turns: 3, endedBy: 'idle_timeout' });
    // Before each of the three messages, and after the last turn.
    expect(events.filter((e) => e.timerStartedEventAttributes)).toHaveLength(4);
    expect(events.filter((e) => e.timerCanceledEventAttributes)).toHaveLength(3);
  });

  it('ends a session cancelled while it idles with the timer of an earlier wait still running, as the first revision does', async () => {
    const outcomes = [];
    for (const revision of [1, 2] as const) {
      const model = `idle-clock-cancel-${revision}`;
      a.llm.script(model, { kind: 'text', text: 'first' }, { kind: 'text', text: 'second' });
      const session = await startSession(a.env.client, a.workerEnv, { model: `anthropic:${model}`, idleTimeoutMs: IDLE_MS, revision });
      await sendAndWait(session, 'one');
      await a.env.sleep(GAP_MS);
      await sendAndWait(session, 'two');
      await session.cancel();
      outcomes.push(await session.result().then(() => 'completed', (error: unknown) => `${(error as Error).name}: ${((error as Error).cause as Error | undefined)?.name}`));
    }
    expect(outcomes[1]).toBe(outcomes[0]);
    expect(outcomes[0]).toBe('WorkflowFailedError: CancelledFailure');
  });
});
