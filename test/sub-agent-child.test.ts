/**
 * A sub-agent's session, started directly with the `parent` input a parent's call gives it:
 * it runs the task as its one turn and ends with the answer, tells its parent its whole
 * spend after each LLM call, refuses messages and ends cancelled when cancelled. Real
 * worker, real scripted LLM, the run's dev server. The parent is a workflow that no worker
 * runs: Temporal records every signal it is sent in its history, where the test reads them.
 */
import { randomUUID } from 'node:crypto';
import { CancelledFailure, defaultPayloadConverter, WorkflowFailedError, WorkflowUpdateStage } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { readLog, startSession } from '../client/sessions';
import { awaitTurnUpdate, sendUpdate } from '../contracts/api';
import type { Spend } from '../contracts/spend';
import type { SubAgentParent, SubAgentSpend } from '../contracts/sub-agents';
import { useAgentHarness } from './support/agent-harness';
import { eventually } from './support/eventually';

const TAG = Date.now();
const h = useAgentHarness();

/** A parent that exists and records what it is sent, without a worker: its task queue has none. */
async function silentParent(name: string): Promise<string> {
  const workflowId = `parent-${name}-${TAG}`;
  await h().client.workflow.start('parentWithoutWorker', { taskQueue: `no-worker-${randomUUID()}`, workflowId });
  return workflowId;
}

/** The `subAgentSpend` signals the parent was sent, in order. */
async function spendSignals(parentId: string): Promise<SubAgentSpend[]> {
  const history = await h().client.workflow.getHandle(parentId).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const signal = e.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName !== 'subAgentSpend') return [];
    return [defaultPayloadConverter.fromPayload<SubAgentSpend>(signal.input?.payloads?.[0] ?? {})];
  });
}

function parentOf(workflowId: string, task: string, extra: Partial<SubAgentParent> = {}): SubAgentParent {
  return { workflowId, turn: 2, step: 1, callId: 'toolu_sub1', lineage: ['session'], depth: 1, maxDepth: 3, task, ...extra };
}

const spendOf = (inputTokens: number, outputTokens: number): Spend => ({ inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: null });

describe("a sub-agent's session", () => {
  it("runs its parent's task as its one turn and ends with the turn's answer and its whole spend, telling the parent its spend after each LLM call", async () => {
    const model = `child-answer-${TAG}`;
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ id: 'toolu_calc1', name: 'calculator', input: { expression: '6*7' } }], usage: { inputTokens: 100, outputTokens: 10 } },
      { kind: 'tool_calls', calls: [{ id: 'toolu_calc2', name: 'calculator', input: { expression: '42/1' } }], usage: { inputTokens: 120, outputTokens: 10 } },
      { kind: 'text', text: 'It is 42.', usage: { inputTokens: 150, outputTokens: 5 } },
    );
    const parentId = await silentParent('answer');
    const child = await startSession(h().client, h().env, { model: `anthropic:${model}`, parent: parentOf(parentId, 'What is 6*7?') });

    const result = await child.result();
    expect(result).toMatchObject({ turns: 1, endedBy: 'request', answer: { outcome: { turn: 1, status: 'completed', reason: 'answered' }, text: 'It is 42.', spend: spendOf(370, 25) } });
    expect(result.spend).toEqual(spendOf(370, 25));
    const events = await readLog(child);
    expect(events.filter((e) => e.type === 'turn/start')).toMatchObject([{ turn: 1, text: 'What is 6*7?' }]);
    // Each figure is the whole spend so far. The last call's signal leaves in the workflow
    // task that closes the child, which Temporal drops: the answer carries that figure.
    const signals = await eventually(
      'the spend signals at the parent',
      async () => {
        const sent = await spendSignals(parentId);
        return sent.length >= 2 ? sent : undefined;
      },
      10_000,
    );
    expect(signals).toEqual([
      { callId: 'toolu_sub1', workflowId: expect.any(String), spend: spendOf(100, 10) },
      { callId: 'toolu_sub1', workflowId: expect.any(String), spend: spendOf(220, 20) },
    ]);
  });

  it("answers in the call's output schema, whose value is the answer's outcome", async () => {
    const model = `child-typed-${TAG}`;
    h().llm.script(model, { kind: 'text', text: '{"answer":42}' });
    const outputSchema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'], additionalProperties: false };
    const child = await startSession(h().client, h().env, { model: `openai:${model}`, parent: parentOf(await silentParent('typed'), 'What is 6*7?', { outputSchema }) });

    const { answer } = await child.result();
    expect(answer).toMatchObject({ outcome: { status: 'completed', output: { answer: 42 } }, text: '{"answer":42}' });
    expect((await readLog(child)).find((e) => e.type === 'turn/start')).toMatchObject({ output: { schema: outputSchema } });
  });

  it('ends with its answer when its parent is gone: a spend signal that finds no parent is no failure', async () => {
    const model = `child-orphan-${TAG}`;
    h().llm.script(model, { kind: 'text', text: 'Done alone.' });
    const child = await startSession(h().client, h().env, { model: `google:${model}`, parent: parentOf(`no-such-parent-${TAG}`, 'Work alone.') });
    expect((await child.result()).answer).toMatchObject({ outcome: { status: 'completed' }, text: 'Done alone.' });
  });

  it('refuses a message in one line saying it is a sub-agent’s session, and closes as soon as its task’s turn has ended', async () => {
    const model = `child-send-${TAG}`;
    h().llm.script(model, { kind: 'text', text: 'Only the task.', hold: true });
    const parentId = await silentParent('send');
    const child = await startSession(h().client, h().env, { model: `anthropic:${model}`, parent: parentOf(parentId, 'The task.') });
    await h().llm.waitForRequests(1, { model });

    const sent = await child.startUpdate(sendUpdate, { args: [{ text: 'another message' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    const turn = await child.startUpdate(awaitTurnUpdate, { args: [{ turn: 1 }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    h().llm.release(model);
    await turn.result();
    // Closed in the workflow task that ended the turn: it waits for no `end`, no idle timeout and no message accepted meanwhile.
    expect((await child.describe()).status.name).toBe('COMPLETED');
    // Refused by the validator, so it never entered the child's history.
    await expect(sent.result()).rejects.toMatchObject({
      cause: { message: `this is a sub-agent's session (started by ${parentId}): it runs its one task and accepts no message` },
    });
    expect(await child.result()).toMatchObject({ turns: 1, answer: { text: 'Only the task.' } });
    expect((await readLog(child)).filter((e) => e.type === 'turn/start')).toHaveLength(1);
  });

  it('cancelled (its parent cancelling the call) closes its turn cancelled and then ends cancelled', async () => {
    const model = `child-cancel-${TAG}`;
    h().llm.script(model, { kind: 'text', text: 'never heard', hold: true, holdTimeoutMs: 60_000 });
    const child = await startSession(h().client, h().env, { model: `anthropic:${model}`, parent: parentOf(await silentParent('cancel'), 'Take your time.') });
    await h().llm.waitForRequests(1, { model });

    await child.cancel();
    const failure = await child.result().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    const events = await readLog(child);
    expect(events.filter((e) => e.type === 'step/end' || e.type === 'turn/end')).toMatchObject([
      { type: 'step/end', step: 1, status: 'cancelled' },
      { type: 'turn/end', turn: 1, status: 'cancelled' },
    ]);
    h().llm.release(model);
  });
});
