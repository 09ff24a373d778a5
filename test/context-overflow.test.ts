/**
 * The provider says the request is too long (`context_overflow`): the session compacts and
 * sends the same step's request once more. A second overflow fails the turn with
 * `context_overflow`, and the session goes on with the next message. Against the scripted
 * LLM on each provider's wire, whose overflow is that provider's own 400.
 */
import { describe, expect, it } from 'vitest';
import { endSession, readLog, sendAndWait, startSession, type SessionHandle } from '../client/sessions';
import type { RecordedRequest } from '../testing/scripted-llm/server';
import { stateQuery } from '../contracts/api';
import type { SessionEvent } from '../contracts/session-log';
import { useAgentHarness } from './support/agent-harness';
import { unpairedToolCalls } from './support/pairing';
import { TOOL_STEP_THEN_COMPACTED_ANSWER, turnShape } from './support/turn-shape';

const h = useAgentHarness();

const PROVIDERS = ['anthropic', 'openai', 'google'] as const;
type Provider = (typeof PROVIDERS)[number];

let counter = 0;

/**
 * A session (no context window: the model is in no table, so it never compacts on its own
 * estimate) whose first turn is answered and ended, so a compaction has a turn to cut.
 */
async function sessionAfterOneTurn(provider: Provider): Promise<{ model: string; session: SessionHandle }> {
  const model = `overflow-${provider}-${Date.now()}-${++counter}`;
  h().llm.script(model, { kind: 'text', text: 'The first answer.' });
  const session = await startSession(h().client, h().env, { model: `${provider}:${model}`, idleTimeoutMs: 120_000 });
  expect(await sendAndWait(session, 'the first question')).toMatchObject({ status: 'completed', turn: 1 });
  expect((await session.query(stateQuery)).contextWindow).toBeNull();
  return { model, session };
}

/** Requests as `purpose reply`, for one exact expectation. */
const shapes = (requests: RecordedRequest[]) => requests.map((r) => `${r.purpose} ${r.replyKind}`);


function expectNothingRefusedOrUnpaired(model: string): void {
  expect(h().llm.requests({ model, replyKind: 'unpaired' })).toEqual([]);
  expect(h().llm.requests({ model }).flatMap((r) => unpairedToolCalls(r.body))).toEqual([]);
}

describe.each(PROVIDERS)('a context overflow on %s', (provider) => {
  it('compacts through the last ended turn and sends the same step once more: 2 requests for that step, 1 compaction, the turn completes', async () => {
    const { model, session } = await sessionAfterOneTurn(provider);
    const before = h().llm.requests({ model }).length;
    // Step 1 calls a tool; step 2's request is refused as too long, then answered.
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '6*7' } }] },
      { kind: 'context_overflow' },
      { kind: 'text', text: 'It is 42.' },
    );
    expect(await sendAndWait(session, 'what is 6*7?')).toMatchObject({ status: 'completed', turn: 2 });

    const turn2 = h().llm.requests({ model }).slice(before);
    expect(shapes(turn2)).toEqual(['step tool_calls', 'step context_overflow', 'compact summary', 'step text']);
    // The step sent again is the one refused, now with the summary in place of turn 1 and with its own call and result.
    const [, refused, , retried] = turn2.map((r) => JSON.stringify(r.body));
    expect(refused).toContain('the first question');
    expect(retried).not.toContain('the first question');
    expect(retried).not.toContain('The first answer.');
    expect(retried).toContain('Summary by the scripted LLM');
    expect(retried).toContain('what is 6*7?');
    expect(retried).toContain('42');
    expectNothingRefusedOrUnpaired(model);

    const log = await readLog(session);
    const compactions = log.filter((e) => e.type === 'context/compacted');
    const turn1End = log.find((e) => e.type === 'turn/end' && e.turn === 1);
    expect(compactions).toEqual([expect.objectContaining({ turn: 2, throughSeq: turn1End?.seq })]);
    // One step 2, whose LLM call answered after the compaction: the overflow left no failed step behind.
    expect(turnShape(log, 2)).toEqual(TOOL_STEP_THEN_COMPACTED_ANSWER);
    expect(log.at(-1)).toMatchObject({ type: 'turn/end', turn: 2, status: 'completed' });
    // The UI shows the last compaction's tokens before and after as the session's current details.
    const { tokensBefore, tokensAfter } = compactions[0] as Extract<SessionEvent, { type: 'context/compacted' }>;
    const metadata = await session.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    expect(metadata.currentDetails).toBe(`turn 2 · compacted through event ${turn1End?.seq} · ${tokensBefore} → ${tokensAfter} tokens`);
    await endSession(session);
  });

  it('fails the turn with context_overflow when the request sent again overflows too, and the session answers the next message', async () => {
    const { model, session } = await sessionAfterOneTurn(provider);
    const before = h().llm.requests({ model }).length;
    h().llm.script(model, { kind: 'context_overflow' }, { kind: 'context_overflow' });
    const failed = await sendAndWait(session, 'a question too long twice');
    expect(failed).toMatchObject({ status: 'failed', turn: 2, failure: { type: 'context_overflow' } });
    expect(shapes(h().llm.requests({ model }).slice(before))).toEqual(['step context_overflow', 'compact summary', 'step context_overflow']);

    const afterFailure = h().llm.requests({ model }).length;
    h().llm.script(model, { kind: 'text', text: 'Back on track.' });
    expect(await sendAndWait(session, 'and now a short one')).toMatchObject({ status: 'completed', turn: 3 });
    const turn3 = h().llm.requests({ model }).slice(afterFailure);
    // The compaction of turn 2 still applies: turn 1 is sent as its summary.
    expect(shapes(turn3)).toEqual(['step text']);
    const sent = JSON.stringify(turn3[0]?.body);
    expect(sent).toContain('Summary by the scripted LLM');
    expect(sent).not.toContain('the first question');
    expect(sent).toContain('and now a short one');
    expectNothingRefusedOrUnpaired(model);

    const log = await readLog(session);
    expect(log.filter((e) => e.type === 'context/compacted')).toHaveLength(1);
    expect(log.filter((e) => e.type === 'turn/end').map((e) => (e.type === 'turn/end' ? [e.turn, e.status, e.failure?.type] : []))).toEqual([
      [1, 'completed', undefined],
      [2, 'failed', 'context_overflow'],
      [3, 'completed', undefined],
    ]);
    await endSession(session);
  });
});

describe('a context overflow with nothing to cut', () => {
  it('fails the first turn at once with context_overflow, without a compaction call, and the session answers the next message', async () => {
    const model = `overflow-first-${Date.now()}`;
    h().llm.script(model, { kind: 'context_overflow' }, { kind: 'text', text: 'Fine now.' });
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}`, idleTimeoutMs: 120_000 });
    expect(await sendAndWait(session, 'a first message too long')).toMatchObject({ status: 'failed', turn: 1, failure: { type: 'context_overflow' } });
    expect(shapes(h().llm.requests({ model }))).toEqual(['step context_overflow']);
    expect(await sendAndWait(session, 'a shorter one')).toMatchObject({ status: 'completed', turn: 2 });
    expect(h().llm.requests({ model, purpose: 'compact' })).toEqual([]);
    await endSession(session);
  });
});
