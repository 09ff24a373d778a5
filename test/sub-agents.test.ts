import { WorkflowExecutionStatusName } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, ChildWorkflowFailure, RetryState } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { readLog, sendAndWait, startSession, type SessionHandle } from '../client/sessions';
import { cancelTurnUpdate, decideApprovalUpdate, refreshToolsUpdate, setBudgetUpdate, stateQuery, type SessionInput, type SessionResult } from '../contracts/api';
import { defineAgent } from '../contracts/agents/agent-definition';
import type { SessionEvent } from '../contracts/session-log';
import { AgentModel } from '../contracts/search-attributes';
import { NO_SPEND } from '../contracts/spend';
import { subAgentSpendSignal, subAgentWorkflowId } from '../contracts/sub-agents';
import { positionIdempotencyKey } from '../contracts/tools/idempotency-key';
import { asCancellation } from '../workflows/sub-agents';
import { useAgentHarness } from './support/agent-harness';
import { eventually } from './support/eventually';

/**
 * The parent side of sub-agents (docs/sub-agents.md) on one in-process worker and the run's
 * dev server: a session with `agents` offers them as tools, a call runs the agent as a child
 * workflow, and its answer, spend and failure come back as the call's result.
 * test/sub-agents-process.test.ts proves the same across worker processes and SIGKILLs.
 */

const TAG = Date.now();
const researcherModel = `researcher-${TAG}`;
const researcher = defineAgent({ name: 'researcher', description: 'Finds things out.', model: `anthropic:${researcherModel}`, tools: ['calculator'] });

const plannerModel = `planner-${TAG}`;
const planner = defineAgent({ name: 'planner', description: 'Plans, and hands research on.', model: `anthropic:${plannerModel}`, tools: [], agents: ['researcher'] });

const h = useAgentHarness({ agents: [researcher, planner] });

let sessions = 0;
/** A parent session on a model of its own, offered the researcher. */
async function parent(options: Partial<SessionInput> = {}): Promise<{ session: SessionHandle; model: string }> {
  const model = `parent-${TAG}-${++sessions}`;
  const session = await startSession(h().client, h().env, { model: `anthropic:${model}`, agents: ['researcher'], ...options });
  return { session, model };
}

const callOf = (id: string, input: Record<string, unknown>) => ({ kind: 'tool_calls' as const, calls: [{ id, name: 'agent__researcher', input }] });
const usage = (inputTokens: number, outputTokens: number) => ({ usage: { inputTokens, outputTokens } });
const ofType = <T extends SessionEvent['type']>(events: SessionEvent[], type: T) => events.filter((e): e is Extract<SessionEvent, { type: T }> => e.type === type);

/** The child's id as the parent derives it from the call's position. */
const childIdOf = (parentId: string, callId: string, turn = 1, step = 1) =>
  subAgentWorkflowId(parentId, 'researcher', { turn, step, key: positionIdempotencyKey(parentId, { turn, step, callId }).slice('agent-'.length, 'agent-'.length + 12) });

const statusOf = async (workflowId: string): Promise<WorkflowExecutionStatusName> => (await h().client.workflow.getHandle(workflowId).describe()).status.name;

describe('an agent offered as a tool', () => {
  it("answers the parent's call with the child's answer, from a child workflow whose id comes from the call", async () => {
    const { session, model } = await parent({ approvalRequired: ['write_file'] });
    h().llm.script(model, { ...callOf('toolu_sub_e2e', { task: 'How tall is the tower?' }), ...usage(10, 2) }, { kind: 'text', text: 'It is 330 m tall.', ...usage(20, 3) });
    h().llm.script(researcherModel, { kind: 'text', text: 'The tower is 330 m tall.', ...usage(100, 7) });

    expect((await sendAndWait(session, 'Ask the researcher.')).status).toBe('completed');
    const events = await readLog(session);
    const childId = childIdOf(session.workflowId, 'toolu_sub_e2e');
    expect(ofType(events, 'tools/listed')[0]?.agents).toEqual([
      { name: 'agent__researcher', agent: 'researcher', description: 'Finds things out.', record: expect.objectContaining({ name: 'researcher' }) },
    ]);
    expect(ofType(events, 'tool/call')).toEqual([expect.objectContaining({ name: 'agent__researcher', child: { workflowId: childId, agent: 'researcher' } })]);
    const [result] = ofType(events, 'tool/result');
    expect(result).toMatchObject({ code: 'ok', content: 'The tower is 330 m tall.', spend: { inputTokens: 100, outputTokens: 7 } });
    expect(JSON.stringify(h().llm.requests({ model })[0]?.body)).toContain('agent__researcher');

    // A child of the parent's, with its own history, run as the agent, with the parent's approvals.
    const child = h().client.workflow.getHandle(childId);
    const described = await child.describe();
    expect(described.parentExecution?.workflowId).toBe(session.workflowId);
    expect(described.status.name).toBe('COMPLETED');
    const childEvents = await readLog(child);
    expect(ofType(childEvents, 'turn/start')).toEqual([expect.objectContaining({ turn: 1, text: 'How tall is the tower?' })]);
    const childState = await child.query(stateQuery);
    expect(childState).toMatchObject({ agent: { name: 'researcher' }, model: `anthropic:${researcherModel}` });
    expect(childState.settings).toMatchObject({ approvalRequired: ['write_file'] });
    expect(((await child.result()) as SessionResult).answer).toMatchObject({ outcome: { status: 'completed' }, text: 'The tower is 330 m tall.' });
    // At its parent's revision (2): started `running` by the parent, it upserts only when its turn ends and when it ends.
    const childHistory = (await child.fetchHistory()).events ?? [];
    const startedWith = childHistory[0]?.workflowExecutionStartedEventAttributes?.searchAttributes?.indexedFields ?? {};
    expect(Buffer.from(startedWith.AgentStatus?.data ?? new Uint8Array()).toString()).toBe('"running"');
    const upserted = childHistory.map((e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.AgentStatus?.data).filter((data) => data !== undefined);
    expect(upserted.map((data) => Buffer.from(data as Uint8Array).toString())).toEqual(['"idle"', '"ended"']);
    expect(described.typedSearchAttributes.get(AgentModel)).toBe(`anthropic:${researcherModel}`);
  });

  it('answers with the typed output when the call gives an output schema', async () => {
    const { session, model } = await parent();
    const schema = { type: 'object', properties: { metres: { type: 'number' } }, required: ['metres'], additionalProperties: false };
    h().llm.script(model, callOf('toolu_sub_typed', { task: 'How tall, in metres?', output_schema: schema }), { kind: 'text', text: 'Done.' });
    h().llm.script(researcherModel, { kind: 'json', value: { metres: 330 } });

    expect((await sendAndWait(session, 'Ask for a number.')).status).toBe('completed');
    const [result] = ofType(await readLog(session), 'tool/result');
    expect(result).toMatchObject({ code: 'ok', content: '{"metres":330}' });
  });

  it("counts the running child's spend in the parent's live, and its final spend once", async () => {
    const { session, model } = await parent();
    h().llm.script(model, { ...callOf('toolu_sub_live', { task: 'Add them up.' }), ...usage(10, 1) }, { kind: 'text', text: 'Done.', ...usage(10, 1) });
    h().llm.script(
      researcherModel,
      { kind: 'tool_calls', calls: [{ id: 'toolu_calc', name: 'calculator', input: { expression: '2+2' } }], ...usage(100, 20) },
      { kind: 'text', text: '4', hold: true, ...usage(50, 5) },
    );
    const seen = h().llm.requests({ model: researcherModel }).length;
    const turn = sendAndWait(session, 'Delegate.');
    await h().llm.waitForRequests(seen + 2, { model: researcherModel }, 20_000);

    // The child's first call (120 tokens) is in the parent's spend while its second is held.
    const live = await eventually('the parent to count the child’s first call', async () => {
      const state = await session.query(stateQuery);
      return state.spend.inputTokens === 110 ? state : undefined;
    }, 10_000);
    expect(live.spend).toMatchObject({ inputTokens: 110, outputTokens: 21 });
    expect(live.usage).toMatchObject({ inputTokens: 10, outputTokens: 1 });
    // A signal for the call from any workflow but its child is not counted; the Update after it is answered only once the signal was handled.
    await session.signal(subAgentSpendSignal, { callId: 'toolu_sub_live', workflowId: 'someone-else', spend: { ...NO_SPEND, inputTokens: 1_000_000 } });
    // Nor is an older, lower figure from the child itself (signals may arrive out of order): spend only grows.
    await session.signal(subAgentSpendSignal, { callId: 'toolu_sub_live', workflowId: childIdOf(session.workflowId, 'toolu_sub_live'), spend: { ...NO_SPEND, inputTokens: 1 } });
    await session.executeUpdate(setBudgetUpdate, { args: [{}] });
    expect((await session.query(stateQuery)).spend).toMatchObject({ inputTokens: 110, outputTokens: 21 });

    h().llm.release(researcherModel);
    expect((await turn).status).toBe('completed');
    const state = await session.query(stateQuery);
    expect(state.spend).toMatchObject({ inputTokens: 10 + 150 + 10, outputTokens: 1 + 25 + 1 });
    expect(state.usage).toMatchObject({ inputTokens: 20, outputTokens: 2 });
    expect(ofType(await readLog(session), 'tool/result')[0]?.spend).toMatchObject({ inputTokens: 150, outputTokens: 25 });
  });

  it("counts a grandchild's spend at the root while it runs: each child passes on every change of its spend", async () => {
    const { session, model } = await parent({ agents: ['planner'] });
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_sub_plan', name: 'agent__planner', input: { task: 'Plan it.' } }], ...usage(10, 1) }, { kind: 'text', text: 'Planned.', ...usage(10, 1) });
    h().llm.script(plannerModel, { kind: 'tool_calls', calls: [{ id: 'toolu_sub_deep', name: 'agent__researcher', input: { task: 'Look it up.' } }], ...usage(20, 2) }, { kind: 'text', text: 'Plan.', ...usage(20, 2) });
    h().llm.script(
      researcherModel,
      { kind: 'tool_calls', calls: [{ id: 'toolu_calc_deep', name: 'calculator', input: { expression: '3+3' } }], ...usage(100, 20) },
      { kind: 'text', text: '6', hold: true, ...usage(50, 5) },
    );
    const seen = h().llm.requests({ model: researcherModel }).length;
    const turn = sendAndWait(session, 'Delegate twice.');
    await h().llm.waitForRequests(seen + 2, { model: researcherModel }, 20_000);

    // The root's own call (10), the planner's (20) and the researcher's first (100), while the researcher's second is held.
    await eventually('the root to count its grandchild’s first call', async () => ((await session.query(stateQuery)).spend.inputTokens === 130 ? true : undefined), 10_000);

    h().llm.release(researcherModel);
    expect((await turn).status).toBe('completed');
    expect((await session.query(stateQuery)).spend).toMatchObject({ inputTokens: 10 + 20 + 150 + 20 + 10, outputTokens: 1 + 2 + 25 + 2 + 1 });
  });

  it("caps the child's budget at what the parent has left, and the parent's result carries the child's budget_exceeded", async () => {
    const { session, model } = await parent({ budgetTokens: 1_000 });
    h().llm.script(model, { ...callOf('toolu_sub_cap', { task: 'Spend.' }), ...usage(300, 100) });
    h().llm.script(researcherModel, { kind: 'tool_calls', calls: [{ id: 'toolu_calc2', name: 'calculator', input: { expression: '1+1' } }], ...usage(500, 200) });

    const outcome = await sendAndWait(session, 'Delegate within the budget.');
    const childId = childIdOf(session.workflowId, 'toolu_sub_cap');
    expect((await h().client.workflow.getHandle(childId).query(stateQuery)).budget).toEqual({ tokens: 600 });
    const [result] = ofType(await readLog(session), 'tool/result');
    expect(result).toMatchObject({ code: 'error', failure: { type: 'budget_exceeded' }, spend: { inputTokens: 500, outputTokens: 200 } });
    expect(result?.content).toContain('The agent "researcher" failed: budget_exceeded');
    // The parent spent 400 and its child 700: its own next call is refused too.
    expect(outcome).toMatchObject({ status: 'failed', failure: { type: 'budget_exceeded' } });
  });

  it('answers a call with nothing of the budget left without starting a child, and records none', async () => {
    const { session, model } = await parent({ budgetTokens: 100 });
    h().llm.script(model, { ...callOf('toolu_sub_spent', { task: 'Spend.' }), ...usage(80, 20) });

    expect(await sendAndWait(session, 'Delegate with nothing left.')).toMatchObject({ status: 'failed', failure: { type: 'budget_exceeded' } });
    const events = await readLog(session);
    expect(ofType(events, 'tool/call')[0]).not.toHaveProperty('child');
    expect(ofType(events, 'tool/result')[0]).toMatchObject({ code: 'error', content: expect.stringContaining('was not started') });
    await expect(statusOf(childIdOf(session.workflowId, 'toolu_sub_spent'))).rejects.toThrow(/not found/i);
  });

  it('waits for approval when the parent requires it of agent__*, and starts no child before it', async () => {
    const { session, model } = await parent({ approvalRequired: ['agent__*'] });
    h().llm.script(model, callOf('toolu_sub_approve', { task: 'Check the figures.' }), { kind: 'text', text: 'Checked.' });
    h().llm.script(researcherModel, { kind: 'text', text: 'The figures add up.' });
    const turn = sendAndWait(session, 'Delegate, once approved.');

    const pending = await eventually('the call to wait for approval', async () => (await session.query(stateQuery)).pendingApprovals.find((p) => p.callId === 'toolu_sub_approve'));
    expect(pending).toMatchObject({ name: 'agent__researcher' });
    await expect(statusOf(childIdOf(session.workflowId, 'toolu_sub_approve'))).rejects.toThrow(/not found/i);
    await session.executeUpdate(decideApprovalUpdate, { args: [{ callId: 'toolu_sub_approve', approved: true }] });

    expect((await turn).status).toBe('completed');
    expect(ofType(await readLog(session), 'tool/result')[0]).toMatchObject({ code: 'ok', content: 'The figures add up.' });
  });

  it("gives the parent the child's failure type unchanged", async () => {
    const { session, model } = await parent();
    h().llm.script(model, callOf('toolu_sub_fail', { task: 'Fail.' }), { kind: 'text', text: 'It failed.' });
    h().llm.script(researcherModel, { kind: 'status', status: 401 });

    expect((await sendAndWait(session, 'Delegate.')).status).toBe('completed');
    const childEvents = await readLog(h().client.workflow.getHandle(childIdOf(session.workflowId, 'toolu_sub_fail')));
    const childFailure = ofType(childEvents, 'turn/end')[0]?.failure;
    expect(childFailure?.type).toBe('auth_error');
    const [result] = ofType(await readLog(session), 'tool/result');
    expect(result).toMatchObject({ code: 'error', failure: childFailure });
  });
});

describe('the tree of agents', () => {
  it('refuses a call of an agent already in its chain, starting no child', async () => {
    // A session run as the researcher, offered the researcher: a cycle.
    const session = await startSession(h().client, h().env, { agent: 'researcher', agents: ['researcher'] });
    h().llm.script(researcherModel, callOf('toolu_sub_cycle', { task: 'Ask yourself.' }), { kind: 'text', text: 'I may not.' });

    expect((await sendAndWait(session, 'Recurse.')).status).toBe('completed');
    const events = await readLog(session);
    expect(ofType(events, 'tool/call')).toEqual([]);
    expect(ofType(events, 'tool/result')[0]?.content).toContain('"researcher" is already in this chain of agents (researcher → researcher)');
  });

  it("refuses a call past the tree's depth limit, which its children carry: a child at the limit calls no agent", async () => {
    const { session, model } = await parent({ agents: ['planner'], maxAgentDepth: 1 });
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_sub_plan', name: 'agent__planner', input: { task: 'Plan it.' } }] }, { kind: 'text', text: 'Planned.' });
    h().llm.script(plannerModel, callOf('toolu_sub_plan_research', { task: 'Research it.' }), { kind: 'text', text: 'No research allowed.' });

    expect((await sendAndWait(session, 'Plan.')).status).toBe('completed');
    const [call] = ofType(await readLog(session), 'tool/call');
    const child = h().client.workflow.getHandle(call?.child?.workflowId ?? '');
    const childEvents = await readLog(child);
    expect(ofType(childEvents, 'tool/call')).toEqual([]);
    expect(ofType(childEvents, 'tool/result')[0]?.content).toContain("would make a chain of agents 2 deep, past this session's limit of 1 (maxAgentDepth)");
    expect(ofType(await readLog(session), 'tool/result')[0]).toMatchObject({ code: 'ok', content: 'No research allowed.' });
  });

  it('lists its agents again on refreshTools, as it does its MCP and custom tools', async () => {
    const { session } = await parent();
    await session.executeUpdate(refreshToolsUpdate);
    const listed = ofType(await readLog(session), 'tools/listed');
    expect(listed.map((e) => e.agents?.map((a) => a.name))).toEqual([['agent__researcher']]);
  });

  it('fails the listing of an agent the worker does not define, never retried', async () => {
    const session = await startSession(h().client, h().env, { model: `anthropic:unknown-${TAG}`, agents: ['nobody'] });
    const outcome = await sendAndWait(session, 'Hello.');
    expect(outcome).toMatchObject({ status: 'failed', failure: { type: 'unknown_agent' } });
    expect(outcome.failure?.message).toContain('this worker has no agent "nobody"; it has researcher');
  });
});

describe('a child while its parent’s step is stopped', () => {
  it("cancelling the parent's turn cancels the child, and the call's outcome is unknown, with what the child spent recorded", async () => {
    const { session, model } = await parent();
    h().llm.script(model, { ...callOf('toolu_sub_cancel', { task: 'Take your time.' }), ...usage(10, 1) });
    h().llm.script(
      researcherModel,
      { kind: 'tool_calls', calls: [{ id: 'toolu_calc_cancel', name: 'calculator', input: { expression: '5+5' } }], ...usage(100, 20) },
      { kind: 'text', text: 'Late.', hold: true },
    );
    const seen = h().llm.requests({ model: researcherModel }).length;
    const turn = sendAndWait(session, 'Delegate.');
    const childId = childIdOf(session.workflowId, 'toolu_sub_cancel');
    await h().llm.waitForRequests(seen + 2, { model: researcherModel }, 20_000);
    await eventually('the parent to count the child’s first call', async () => ((await session.query(stateQuery)).spend.inputTokens === 110 ? true : undefined), 10_000);

    expect(await session.executeUpdate(cancelTurnUpdate)).toMatchObject({ cancelled: true });
    expect((await turn).status).toBe('cancelled');
    expect(await statusOf(childId)).toBe('CANCELLED');
    const [result] = ofType(await readLog(session), 'tool/result');
    // The child's spend so far is in the log, so a replay, a fork or the next run counts it as this run does.
    expect(result).toMatchObject({ callId: 'toolu_sub_cancel', code: 'TOOL_OUTCOME_UNKNOWN', spend: { inputTokens: 100, outputTokens: 20 } });
    expect((await session.query(stateQuery)).spend).toMatchObject({ inputTokens: 110, outputTokens: 21 });
  });

  it("the parent's turn timeout mid-child cancels the child and compensates the call", async () => {
    const { session, model } = await parent({ turnTimeoutMs: 2_000 });
    h().llm.script(model, callOf('toolu_sub_timeout', { task: 'Take your time.' }));
    h().llm.script(researcherModel, { kind: 'text', text: 'Late.', hold: true, holdTimeoutMs: 30_000 });

    const outcome = await sendAndWait(session, 'Delegate.');
    expect(outcome).toMatchObject({ status: 'failed', failure: { type: 'turn_timeout' } });
    expect(await statusOf(childIdOf(session.workflowId, 'toolu_sub_timeout'))).toBe('CANCELLED');
    const [result] = ofType(await readLog(session), 'tool/result');
    expect(result).toMatchObject({ callId: 'toolu_sub_timeout', code: 'TOOL_OUTCOME_UNKNOWN' });
  });
});

describe('a call stopped with its step', () => {
  it('fails as cancelled whatever the child did in the same moment, so compensation answers it TOOL_OUTCOME_UNKNOWN', () => {
    const childFailed = new ChildWorkflowFailure('default', { workflowId: 'child', runId: 'run' }, 'agentSession', RetryState.NON_RETRYABLE_FAILURE, ApplicationFailure.create({ type: 'auth_error', message: 'no key' }));
    expect(asCancellation(childFailed)).toBeInstanceOf(CancelledFailure);
    expect(asCancellation(new Error('already started'))).toBeInstanceOf(CancelledFailure);
    const cancelled = new CancelledFailure('cancelled');
    expect(asCancellation(new ChildWorkflowFailure('default', { workflowId: 'child', runId: 'run' }, 'agentSession', RetryState.CANCEL_REQUESTED, cancelled))).toBe(cancelled);
  });
});
