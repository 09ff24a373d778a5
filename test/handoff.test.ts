import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { agentCatalogueOf } from '../activities/agents/agent-catalogue';
import { withAgentSettings } from '../contracts/agents/agent-record';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { WorkflowUpdateStage } from '@temporalio/client';
import { formatEvent } from '../client/output';
import { readLog, runOnce, sendAndWait, startSession, turnOutcomeOf, type SessionHandle } from '../client/sessions';
import { SessionRunInputSchema, sendUpdate, stateQuery, type SessionResult } from '../contracts/api';
import { defineAgent } from '../contracts/agents/agent-definition';
import { handoffWorkflowId } from '../contracts/handoffs';
import type { SessionEvent } from '../contracts/session-log';
import { positionIdempotencyKey } from '../contracts/tools/idempotency-key';
import { useAgentHarness } from './support/agent-harness';

/**
 * The handoff (docs/sub-agents.md#handing-the-conversation-over) on one in-process worker and
 * the run's dev server: a session with `handoffs` offers them as tools; a call starts the agent
 * as a session given the conversation so far and the user's message, which answers it; the
 * session that handed over records where the conversation went and ends.
 */

const TAG = Date.now();
const billingModel = `billing-${TAG}`;
const billing = defineAgent({ name: 'billing', description: 'Answers billing questions.', model: `anthropic:${billingModel}`, tools: ['calculator'] });
// A pair that may hand the conversation to each other (and on to billing): the chain's checks refuse the round trip.
const deskModel = `desk-${TAG}`;
const refundsModel = `refunds-${TAG}`;
const desk = defineAgent({ name: 'desk', description: 'Greets.', model: `anthropic:${deskModel}`, tools: [], handoffs: ['refunds'] });
const refunds = defineAgent({ name: 'refunds', description: 'Refunds.', model: `anthropic:${refundsModel}`, tools: [], handoffs: ['desk', 'billing'] });

const h = useAgentHarness({ agents: [billing, desk, refunds] });

let sessions = 0;
async function frontDesk(): Promise<{ session: SessionHandle; model: string }> {
  const model = `front-${TAG}-${++sessions}`;
  const session = await startSession(h().client, h().env, { model: `anthropic:${model}`, handoffs: ['billing'] });
  return { session, model };
}

const handoffCall = (id: string, reason: string, agent = 'billing') => ({ kind: 'tool_calls' as const, calls: [{ id, name: `handoff__${agent}`, input: { reason } }] });
const ofType = <T extends SessionEvent['type']>(events: SessionEvent[], type: T) => events.filter((e): e is Extract<SessionEvent, { type: T }> => e.type === type);
const targetIdOf = (fromId: string, callId: string, turn: number, step = 1, agent = 'billing') =>
  handoffWorkflowId(fromId, agent, { turn, step, key: positionIdempotencyKey(fromId, { turn, step, callId }).slice('agent-'.length, 'agent-'.length + 12) });

describe('a handoff', () => {
  it("carries the conversation to the agent, which answers the user's message; the session that handed over ends `handoff`", async () => {
    const { session, model } = await frontDesk();
    h().llm.script(model, { kind: 'text', text: 'Hello, how can I help?' }, handoffCall('toolu_hand', 'a billing question'));
    h().llm.script(billingModel, { kind: 'text', text: 'I have refunded the second charge.' });

    expect((await sendAndWait(session, 'Hi.')).status).toBe('completed');
    const targetId = targetIdOf(session.workflowId, 'toolu_hand', 2);
    const answered = await sendAndWait(session, 'I was charged twice.');
    expect(answered).toMatchObject({ status: 'completed', turn: 2, reason: 'answered', answeredBy: targetId, handedOffTo: { workflowId: targetId, agent: 'billing', turn: 2 } });

    // The target: the first turn carried as a fork carries it, the user's message its own turn 2, answered by its model.
    const target = h().client.workflow.getHandle(targetId);
    const targetEvents = await readLog(target);
    expect(ofType(targetEvents, 'turn/start').map((e) => [e.turn, e.text])).toEqual([
      [1, 'Hi.'],
      [2, 'I was charged twice.'],
    ]);
    expect(ofType(targetEvents, 'tool/call')).toEqual([]);
    expect(ofType(targetEvents, 'assistant').at(-1)?.message.text).toBe('I have refunded the second charge.');
    expect(JSON.stringify(h().llm.requests({ model: billingModel }).at(-1)?.body)).toContain('Hello, how can I help?');
    expect(await target.query(stateQuery)).toMatchObject({ status: 'idle', agent: { name: 'billing' }, forkedFrom: { workflowId: session.workflowId } });
    expect((await target.describe()).parentExecution?.workflowId).toBe(session.workflowId);

    // The session that handed over: where the conversation went, its turn ended `handoff`, and it ended.
    const events = await readLog(session);
    expect(ofType(events, 'tool/call')).toEqual([expect.objectContaining({ name: 'handoff__billing', child: { workflowId: targetId, agent: 'billing' } })]);
    expect(ofType(events, 'tool/result')[0]).toMatchObject({ code: 'ok', content: `Handed the conversation to billing (session ${targetId})` });
    expect(ofType(events, 'session/handed-off')).toEqual([expect.objectContaining({ turn: 2, step: 1, to: { workflowId: targetId, agent: 'billing', turn: 2 }, reason: 'a billing question' })]);
    expect(ofType(events, 'turn/end').at(-1)).toMatchObject({ turn: 2, status: 'completed', reason: 'handoff' });
    // `log` shows where the conversation went.
    const [handedOff] = ofType(events, 'session/handed-off');
    expect(handedOff && formatEvent(handedOff)).toContain(`billing: session ${targetId}`);
    expect((await session.result()) as SessionResult).toMatchObject({ endedBy: 'handoff', handedOffTo: { workflowId: targetId, agent: 'billing' } });

    // The conversation goes on there, as in any session.
    h().llm.script(billingModel, { kind: 'text', text: 'You are welcome.' });
    expect(await sendAndWait(target, 'Thanks.')).toMatchObject({ status: 'completed', turn: 3 });
    await target.terminate('test done');
  });

  it('refuses a message that waited behind the handoff, naming the session that has the conversation', async () => {
    const { session, model } = await frontDesk();
    h().llm.script(model, { ...handoffCall('toolu_hand_q', 'billing'), hold: true });
    h().llm.script(billingModel, { kind: 'text', text: 'Billing here.' });
    const seen = h().llm.requests({ model }).length;
    const first = sendAndWait(session, 'My invoice is wrong.');
    await h().llm.waitForRequests(seen + 1, { model }, 20_000);
    // The second message is accepted (queued) before the held answer is let go.
    const queued = await session.startUpdate(sendUpdate, { args: [{ text: 'Hello?' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    h().llm.release(model);

    const targetId = targetIdOf(session.workflowId, 'toolu_hand_q', 1);
    expect(await first).toMatchObject({ status: 'completed', answeredBy: targetId });
    expect(turnOutcomeOf(await queued.result().catch((error: unknown) => error))).toMatchObject({
      status: 'cancelled',
      turn: 2,
      failure: { message: `this session handed the conversation to billing: send to session ${targetId}` },
    });
    await h().client.workflow.getHandle(targetId).terminate('test done');
  });
});

describe("a handoff keeps the handing session's limits", () => {
  it('gives the target the budget left, the approvals, maxAgentDepth and the chain of agents', async () => {
    const model = `front-limits-${TAG}`;
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}`, handoffs: ['billing'], budgetTokens: 1_000_000, approvalRequired: ['calculator'], maxAgentDepth: 2 });
    h().llm.script(model, handoffCall('toolu_hand_limits', 'billing'));
    h().llm.script(billingModel, { kind: 'text', text: 'Billing, within limits.' });
    const answered = await sendAndWait(session, 'Refund me.');
    const targetId = targetIdOf(session.workflowId, 'toolu_hand_limits', 1);
    expect(answered).toMatchObject({ status: 'completed', answeredBy: targetId });
    const source = await session.query(stateQuery);
    const target = await h().client.workflow.getHandle(targetId).query(stateQuery);
    // The same limit with the spend carried: it has left what the session that handed over had left.
    expect(target.budget).toEqual({ tokens: 1_000_000 });
    expect(target.spend.inputTokens).toBeGreaterThan(source.spend.inputTokens);
    expect(target.settings).toMatchObject({ approvalRequired: ['calculator'], maxAgentDepth: 2, handoff: { chain: ['session'] } });
    await h().client.workflow.getHandle(targetId).terminate('test done');
  });

  it('does not hand over when the budget is spent: the call is answered with an error and no session starts', async () => {
    const model = `front-spent-${TAG}`;
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}`, handoffs: ['billing'], budgetTokens: 1 });
    h().llm.script(model, handoffCall('toolu_hand_spent', 'billing'));
    const turn = await sendAndWait(session, 'Refund me.');
    expect(turn.reason).not.toBe('handoff');
    expect(turn.answeredBy).toBeUndefined();
    const events = await readLog(session);
    expect(ofType(events, 'tool/call')[0]?.child).toBeUndefined();
    expect(ofType(events, 'tool/result')[0]).toMatchObject({ code: 'error', content: `The conversation was not handed to "billing": this session's budget is spent, so nothing is left for it.` });
    expect(ofType(events, 'session/handed-off')).toEqual([]);
    await expect(h().client.workflow.getHandle(targetIdOf(session.workflowId, 'toolu_hand_spent', 1)).describe()).rejects.toThrow();
    await session.terminate('test done');
  });

  it('refuses a handoff back to an agent the conversation came through', async () => {
    const session = await startSession(h().client, h().env, { agent: 'desk' });
    h().llm.script(deskModel, handoffCall('toolu_desk', 'refunds', 'refunds'));
    h().llm.script(refundsModel, handoffCall('toolu_back', 'back to the desk', 'desk'), { kind: 'text', text: 'Refunds keeps the conversation.' });
    const answered = await sendAndWait(session, 'Refund me.');
    const refundsId = targetIdOf(session.workflowId, 'toolu_desk', 1, 1, 'refunds');
    expect(answered).toMatchObject({ status: 'completed', answeredBy: refundsId });
    const events = await readLog(h().client.workflow.getHandle(refundsId));
    expect(ofType(events, 'tool/result')).toEqual([expect.objectContaining({ code: 'error', content: expect.stringContaining('the conversation has already been with "desk" (desk → refunds → desk)') })]);
    expect(ofType(events, 'tool/call')[0]?.child).toBeUndefined();
    expect(ofType(events, 'assistant').at(-1)?.message.text).toBe('Refunds keeps the conversation.');
    await h().client.workflow.getHandle(refundsId).terminate('test done');
  });

  it('refuses a handoff past the limit of handoffs (maxAgentDepth)', async () => {
    const model = `front-hops-${TAG}`;
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}`, handoffs: ['refunds'], maxAgentDepth: 1 });
    h().llm.script(model, handoffCall('toolu_hop1', 'refunds', 'refunds'));
    h().llm.script(refundsModel, handoffCall('toolu_hop2', 'billing'), { kind: 'text', text: 'Refunds stays.' });
    const answered = await sendAndWait(session, 'Refund me.');
    const refundsId = targetIdOf(session.workflowId, 'toolu_hop1', 1, 1, 'refunds');
    expect(answered).toMatchObject({ status: 'completed', answeredBy: refundsId });
    const events = await readLog(h().client.workflow.getHandle(refundsId));
    expect(ofType(events, 'tool/result')).toEqual([
      expect.objectContaining({ code: 'error', content: expect.stringContaining(`handing the conversation to "billing" would be its handoff number 2, past this session's limit of 1 (maxAgentDepth)`) }),
    ]);
    await h().client.workflow.getHandle(refundsId).terminate('test done');
  });
});

describe('a handoff in one `run`', () => {
  it("prints the answer of the session the conversation went to, and ends that one", async () => {
    const model = `front-run-${TAG}`;
    h().llm.script(model, handoffCall('toolu_hand_run', 'billing'));
    h().llm.script(billingModel, { kind: 'text', text: 'Billing answers the run.' });
    const result = await runOnce(h().client, h().env, { model: `anthropic:${model}`, handoffs: ['billing'], prompt: 'Refund me.' });
    const targetId = targetIdOf(result.workflowId, 'toolu_hand_run', 1);
    expect(result).toMatchObject({ status: 'completed', handedOffTo: { workflowId: targetId, agent: 'billing', turn: 1 } });
    expect(result.messages.at(-1)).toMatchObject({ role: 'assistant', text: 'Billing answers the run.' });
    expect((await h().client.workflow.getHandle(targetId).describe()).status.name).toBe('COMPLETED');
  });
});

describe('docs/sub-agents.md', () => {
  it('defines agents whose sessions offer the handoff, which a worker without the target refuses', async () => {
    const text = await readFile(path.join(PROJECT_ROOT, 'docs', 'sub-agents.md'), 'utf8');
    const block = /## Handing the conversation over\n[^]*?```ts\n([^]*?)```/.exec(text)?.[1];
    if (!block) throw new Error('docs/sub-agents.md has no ts block under "## Handing the conversation over"');
    const file = path.join(PROJECT_ROOT, 'test-results', 'docs-handoff-example.ts');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, block.replace("from 'durable-agent-worker'", `from ${JSON.stringify(path.join(PROJECT_ROOT, 'index.ts'))}`));
    const { frontDesk, billing: documented } = (await import(pathToFileURL(file).href)) as Record<'frontDesk' | 'billing', ReturnType<typeof defineAgent>>;
    const [entry] = agentCatalogueOf([frontDesk, documented]);
    expect(SessionRunInputSchema.parse(withAgentSettings({ agent: entry?.record }))).toMatchObject({ handoffs: ['billing'] });
    expect(() => agentCatalogueOf([frontDesk])).toThrow('worker agents: "front-desk" may hand over to agent "billing", which this worker does not define');
  });
});
