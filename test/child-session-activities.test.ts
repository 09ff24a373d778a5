/**
 * The activities through which a workflow of the user's own asks a session (runAgentTurn,
 * startChildSession: docs/plugin.md), run on the SDK's activity environment against real
 * sessions on the test run's server: a message the session refuses fails for good (never
 * retried for ever on an answer that cannot change), a cancelled parent cancels the
 * child's turn rather than leave it running alone, and an attempt that ends with its
 * worker's shutdown leaves the turn for the retry to re-attach to.
 */
import { ActivityCancellationDetails, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createChildSessionActivities } from '../activities/child-session/ask-session';
import { readLog, startSession } from '../client/sessions';
import { endUpdate, stateQuery } from '../contracts/api';
import { useAgentHarness } from './support/agent-harness';
import { eventually } from './support/eventually';

const h = useAgentHarness();
const { askSession, endSession } = createChildSessionActivities();
const activityEnv = () => new MockActivityEnvironment(undefined, { client: h().client });
const unique = (what: string) => `${what}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

describe('a workflow asking a session through its activities', () => {
  it('fails session_refused, not retryable, when the session refuses the message or does not exist', async () => {
    const model = unique('child-refused');
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}`, idleTimeoutMs: 60_000 });
    await expect(activityEnv().run(askSession, { workflowId: session.workflowId, text: '   ', updateId: unique('ask') })).rejects.toMatchObject({
      type: 'session_refused',
      nonRetryable: true,
      message: expect.stringMatching(new RegExp(`^session ${session.workflowId} refused the message: .*must not be empty`)),
    });
    await expect(activityEnv().run(askSession, { workflowId: unique('no-such-session'), text: 'hi', updateId: unique('ask') })).rejects.toMatchObject({ type: 'session_refused', nonRetryable: true });
    await session.executeUpdate(endUpdate);
    await session.result();
    // Ending a session that has ended is what was asked for.
    await expect(activityEnv().run(endSession, { workflowId: session.workflowId })).resolves.toBeUndefined();
  });

  it("cancels the session's turn when the asking activity is cancelled", async () => {
    const model = unique('child-cancelled');
    h().llm.script(model, { kind: 'text', text: 'too late', delayMs: 60_000 });
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}`, idleTimeoutMs: 60_000 });
    const env = activityEnv();
    const asked = env.run(askSession, { workflowId: session.workflowId, text: 'take your time', updateId: unique('ask') });
    await eventually('the turn to call the model', async () => ((await session.query(stateQuery)).phase === 'llm' ? true : undefined), 15_000);
    env.cancel();

    await expect(asked).rejects.toBeInstanceOf(CancelledFailure);
    await eventually('the turn to end cancelled', async () => (await readLog(session)).find((e) => e.type === 'turn/end' && e.status === 'cancelled'), 15_000);
    await session.executeUpdate(endUpdate);
  });

  it("leaves the session's turn running when the asking attempt ends with its worker's shutdown, so a retry re-attaches to it", async () => {
    const model = unique('child-shutdown');
    h().llm.script(model, { kind: 'text', text: 'still here', hold: true, holdTimeoutMs: 60_000 });
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}`, idleTimeoutMs: 60_000 });
    const updateId = unique('ask');
    const first = activityEnv();
    const asked = first.run(askSession, { workflowId: session.workflowId, text: 'take your time', updateId });
    await eventually('the turn to call the model', async () => ((await session.query(stateQuery)).phase === 'llm' ? true : undefined), 15_000);
    first.cancel('WORKER_SHUTDOWN', new ActivityCancellationDetails({ workerShutdown: true }));
    await expect(asked).rejects.toBeInstanceOf(CancelledFailure);
    // The attempt has left: had it cancelled the turn, the session would have taken that Update by now.
    const updates = (await session.fetchHistory()).events?.flatMap((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ?? []);
    expect(updates).toEqual(['send']);

    const retried = activityEnv().run(askSession, { workflowId: session.workflowId, text: 'take your time', updateId });
    await eventually('the held request to be released', async () => (h().llm.release(model) > 0 ? true : undefined), 15_000);
    await expect(retried).resolves.toMatchObject({ outcome: { status: 'completed' }, text: 'still here' });
    await session.executeUpdate(endUpdate);
  });
});
