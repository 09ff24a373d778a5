/**
 * A `setRetryPolicy` while an LLM call is pending reaches the call through the workflow:
 * the call is cancelled and scheduled again with the new policy and the ladder it has
 * spent, and history shows it. End to end on the dev server with a real worker and the
 * scripted LLM; the requests' times are the scripted LLM's own.
 */
import { WorkflowUpdateStage } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { startSession, turnOutcomeOf } from '../client/sessions';
import { sendUpdate, setRetryPolicyUpdate, type SessionInput } from '../contracts/api';
import { DEFAULT_RETRY_POLICY } from '../contracts/retry-policy';
import type { ScriptedReply } from '../testing/scripted-llm/server';
import { POLICY_REACHES_PENDING_CALL } from '../workflows/llm-call-schedules';
import { useAgentHarness } from './support/agent-harness';
import { eventually } from './support/eventually';

const h = useAgentHarness();

let n = 0;
async function started(name: string, replies: ScriptedReply[], input: Partial<SessionInput> = {}) {
  const model = `mid-call-${name}-${++n}-${Date.now()}`;
  h().llm.script(model, ...replies);
  const handle = await startSession(h().client, h().env, { model: `anthropic:${model}`, idleTimeoutMs: 120_000, ...input });
  const turn = await handle.startUpdate(sendUpdate, { args: [{ text: 'hi' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
  return { model, handle, outcome: () => turn.result().then((outcome) => outcome, turnOutcomeOf) };
}

const overloaded: ScriptedReply = { kind: 'status', status: 529 };

/** The LLM activities the session scheduled, by their summaries, and whether it recorded the patch. */
async function scheduledCalls(handle: { fetchHistory(): Promise<{ events?: unknown[] | null }> }) {
  const events = ((await handle.fetchHistory()).events ?? []) as {
    activityTaskScheduledEventAttributes?: { activityType?: { name?: string } };
    activityTaskCancelRequestedEventAttributes?: unknown;
    markerRecordedEventAttributes?: { details?: Record<string, { payloads?: unknown[] }> };
    userMetadata?: { summary?: unknown };
  }[];
  const summaries = events
    .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callLlm')
    .map((e) => defaultPayloadConverter.fromPayload<string>(e.userMetadata?.summary as never));
  const cancels = events.filter((e) => e.activityTaskCancelRequestedEventAttributes).length;
  const patches = events.flatMap((e) => e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads ?? []).map((p) => defaultPayloadConverter.fromPayload<{ id?: string }>(p as never).id);
  const patched = patches.includes(POLICY_REACHES_PENDING_CALL);
  return { summaries, cancels, patched };
}

describe('a retry policy changed while the LLM call is pending', () => {
  it('raised from off while the call streams: the attempt is cut and sent again under the new policy, which retries it; history shows the new schedule', async () => {
    const s = await started('raised', [{ kind: 'text', text: 'cut off', hold: true }, overloaded, { kind: 'text', text: 'fine' }], { retryPolicy: null });
    await h().llm.waitForRequests(1, { model: s.model });
    expect(await s.handle.executeUpdate(setRetryPolicyUpdate, { args: ['default'] })).toEqual(DEFAULT_RETRY_POLICY);
    expect(await s.outcome()).toMatchObject({ status: 'completed' });
    // The cut request, the 529 the raised policy retries, the answer.
    expect(h().llm.requests({ model: s.model })).toHaveLength(3);
    const calls = await scheduledCalls(s.handle);
    expect(calls.summaries).toEqual([expect.stringMatching(/^step 1 · llm /), expect.stringMatching(/^step 1 · llm .* · retry policy changed$/)]);
    expect(calls).toMatchObject({ cancels: 1, patched: true });
  });

  it('changed while the call waits for its retry: the new schedule waits a rung, and counts its retries on from the first schedule', async () => {
    const s = await started('waiting', [{ kind: 'status', status: 529, headers: { 'retry-after': '20' } }, overloaded, overloaded, overloaded, { kind: 'text', text: 'never' }]);
    await h().llm.waitForRequests(1, { model: s.model });
    await eventually('the call to wait for its retry', async () => ((await s.handle.describe()).raw.pendingActivities?.[0]?.attempt === 2 ? true : undefined));
    await s.handle.executeUpdate(setRetryPolicyUpdate, { args: [{ ...DEFAULT_RETRY_POLICY, maxRetries: 2, baseDelayMs: 100, maxDelayMs: 200 }] });
    const changedAt = Date.now();
    expect(await s.outcome()).toMatchObject({ status: 'failed', failure: { type: 'overloaded', message: expect.stringContaining('not retried: max_retries') } });
    // Attempt 1 failed before the change; retries 1 and 2 (attempts 2 and 3) are all the new policy allows.
    const requests = h().llm.requests({ model: s.model });
    expect(requests).toHaveLength(3);
    // Taken out of the 20 s wait, the call waits the whole rung it was on (the default's first, 1 s), not 20 s.
    expect(requests[1]!.at - changedAt).toBeGreaterThanOrEqual(1_000 - 50);
    expect(requests[1]!.at - requests[0]!.at).toBeLessThan(20_000);
    expect(await scheduledCalls(s.handle)).toMatchObject({ cancels: 1, patched: true });
  });

  it('set to the rules already in force: the call is not scheduled again', async () => {
    const s = await started('same', [overloaded, { kind: 'text', text: 'fine' }]);
    await h().llm.waitForRequests(1, { model: s.model });
    await s.handle.executeUpdate(setRetryPolicyUpdate, { args: [{ ...DEFAULT_RETRY_POLICY }] });
    expect(await s.outcome()).toMatchObject({ status: 'completed' });
    expect(await scheduledCalls(s.handle)).toMatchObject({ summaries: [expect.any(String)], cancels: 0, patched: false });
  });
});
