/**
 * The limiter workflow itself on the test run's dev server, asked and released by a client
 * as the LLM activity does: what its history costs while idle, and that a run continues as
 * new without losing a waiter's place (the books' rules are test/limiter-book.test.ts's).
 */
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { acquireLeaseUpdate, FleetLimitSchema, LIMITER_WORKFLOW, limiterWorkflowId, releaseLeaseSignal, type AcquireRequest } from '../contracts/fleet-limits';
import type { agentLimiter } from '../workflows/limiter/limiter-workflow';
import { useAgentHarness } from './support/agent-harness';

const harness = useAgentHarness();
const limits = [FleetLimitSchema.parse({ provider: 'anthropic', concurrentCalls: 1 })];
const request = (holder: string, wait = false): AcquireRequest => ({ holder, attempt: 1, model: 'claude', priority: 'interactive', inputTokens: 10, outputTokens: 10, limits, wait });

async function startLimiter(eventsPerRun?: number) {
  const { client, taskQueue } = harness();
  const workflowId = limiterWorkflowId(`${taskQueue}-${randomUUID().slice(0, 6)}`, 'anthropic');
  return client.workflow.start<typeof agentLimiter>(LIMITER_WORKFLOW, { workflowId, taskQueue, args: eventsPerRun === undefined ? [] : [null, eventsPerRun] });
}

async function eventTypes(workflowId: string, runId?: string): Promise<string[]> {
  const history = await harness().client.workflow.getHandle(workflowId, runId).fetchHistory();
  return (history.events ?? []).map((e) => temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? 'unknown');
}

describe('the limiter workflow', () => {
  it('keeps no timer while nobody waits: an idle limiter costs no action', async () => {
    const limiter = await startLimiter();
    const answer = await limiter.executeUpdate(acquireLeaseUpdate, { args: [request('only')] });
    if (!answer.granted) throw new Error(`not granted: ${JSON.stringify(answer)}`);
    await limiter.signal(releaseLeaseSignal, { attempt: 1, holder: 'only', lease: answer.lease, usage: { inputTokens: 8, outputTokens: 3 } });
    // A query-free barrier: the next Update is handled after the signal.
    expect((await limiter.executeUpdate(acquireLeaseUpdate, { args: [request('second')] })).granted).toBe(true);
    const types = await eventTypes(limiter.workflowId);
    expect(types.filter((t) => t.includes('TIMER_STARTED'))).toEqual([]);
    // Its page in the UI says where the books stand.
    const { currentDetails } = await limiter.query<{ currentDetails: string }>('__temporal_workflow_metadata');
    expect(currentDetails).toBe('1 in flight, none waiting');
    await limiter.terminate('test over');
  });

  it('refuses an ask that is not one, before it reaches the books or the history', async () => {
    const limiter = await startLimiter();
    await expect(limiter.executeUpdate(acquireLeaseUpdate, { args: [{ ...request('bad'), inputTokens: -1 } as AcquireRequest] })).rejects.toMatchObject({ cause: { message: expect.stringMatching(/inputTokens/) } });
    expect((await eventTypes(limiter.workflowId)).filter((t) => t.includes('UPDATE'))).toEqual([]);
    await limiter.terminate('test over');
  });

  it('continues as new when its history is long: a waiting ask is answered `again`, and asked again it keeps its place', async () => {
    const limiter = await startLimiter(60);
    const first = await limiter.executeUpdate(acquireLeaseUpdate, { args: [request('holding')] });
    if (!first.granted) throw new Error('the first call should be granted');
    expect(await limiter.executeUpdate(acquireLeaseUpdate, { args: [request('waiting')] })).toMatchObject({ granted: false, queued: { reason: 'concurrency', position: 1 } });
    const waiting = limiter.executeUpdate(acquireLeaseUpdate, { args: [request('waiting', true)] });
    // Others ask and withdraw until the run's history passes 60 events.
    let answered = false;
    void waiting.finally(() => (answered = true));
    for (let i = 0; i < 40 && !answered; i++) {
      await limiter.executeUpdate(acquireLeaseUpdate, { args: [request(`passer-${i}`)] });
      await limiter.signal(releaseLeaseSignal, { attempt: 1, holder: `passer-${i}` });
    }
    expect(await waiting).toEqual({ granted: false, again: true });
    const firstRun = await eventTypes(limiter.workflowId, limiter.firstExecutionRunId);
    expect(firstRun.at(-1)).toContain('CONTINUED_AS_NEW');

    const latest = harness().client.workflow.getHandle(limiter.workflowId);
    // A later call asks in the new run before the waiter asks again there.
    expect(await latest.executeUpdate(acquireLeaseUpdate, { args: [request('later')] })).toMatchObject({ granted: false, queued: { reason: 'concurrency' } });
    const asked = latest.executeUpdate(acquireLeaseUpdate, { args: [request('waiting', true)] });
    await latest.signal(releaseLeaseSignal, { attempt: 1, holder: 'holding', lease: first.lease });
    // Its first place, kept across the runs, comes before the later call's: one slot, and it is the waiter's.
    expect(await asked).toMatchObject({ granted: true });
    await latest.terminate('test over');
    // Seconds on a loaded machine; a limiter that never drains its waiters fails here in 20 s, not 60.
  }, 20_000);
});
