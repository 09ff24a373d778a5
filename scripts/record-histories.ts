/**
 * Re-records the golden histories in test/fixtures/histories/: one real run per workflow
 * shape, on a private dev server, against the scripted LLM and real tools, on the code of
 * the last release (the patch policy in CONTRIBUTING.md says when), then commit the new
 * files: `npm run record-histories [-- SHAPE…]`.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowUpdateStage } from '@temporalio/client';
import { endSession, exportHistory, forkSession, readLog, sendAndWait, startSession, startSessionWithMessage } from '../client/sessions';
import { cancelTurnUpdate, decideApprovalUpdate, refreshToolsUpdate, sendUpdate, setRetryPolicyUpdate, stateQuery } from '../contracts/api';
import { defineAgent } from '../contracts/agents/agent-definition';
import { startLocalAgent, type LocalAgent } from '../harness/local-agent';
import { turnThatRead } from '../harness/turn-that-read';
import { updateBesideCommand } from '../harness/update-beside-command';
import { findFreePort, startDevServer } from '../harness/dev-server';
import { PROJECT_ROOT } from '../harness/temporal-binaries';

const HISTORIES_DIR = path.join(PROJECT_ROOT, 'test', 'fixtures', 'histories');

/** The workflow id and, when it is not the latest, the run to record. */
type Scenario = (agent: LocalAgent, target: string) => Promise<string | { workflowId: string; runId: string }>;

const calculatorCalls = {
  kind: 'tool_calls' as const,
  calls: [
    { id: 'toolu_rec_1', name: 'calculator', input: { expression: '6*7' } },
    { id: 'toolu_rec_2', name: 'calculator', input: { expression: '2^10' } },
  ],
};

/**
 * The history length at which `compacted-continued` continues as new: past its first run's
 * second turn (the one that compacts), short of its second run's second turn.
 */
const COMPACTED_RUN_EVENTS = 50;

/** The agent the `sub-agent` shapes call: one calculator step, then its answer. */
const RESEARCHER = defineAgent({ name: 'researcher', description: 'Finds things out.', model: 'anthropic:golden-researcher', tools: ['calculator'] });

/**
 * A parent session whose step calls the researcher as a child session, which answers after
 * a calculator step (signalling its spend to the parent after each call); the parent then
 * answers. Both histories are recorded: the parent's (`sub-agent`) and the child's.
 */
async function subAgentSessions(agent: LocalAgent, model: string): Promise<{ parent: string; child: string }> {
  agent.llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_rec_agent', name: 'agent__researcher', input: { task: 'What is 6*7?' } }] }, { kind: 'text', text: 'The researcher says 42.' });
  agent.llm.script('golden-researcher', { kind: 'tool_calls', calls: [{ id: 'toolu_rec_calc', name: 'calculator', input: { expression: '6*7' } }] }, { kind: 'text', text: '42' });
  // Under the id the replay tests give it, its file's name: the child's id is derived from the parent's.
  const session = await start(agent, model, { agents: ['researcher'], workflowId: model });
  await sendAndWait(session, 'ask the researcher');
  const child = (await readLog(session)).find((e) => e.type === 'tool/call')?.child?.workflowId;
  if (!child) throw new Error('recording: the parent recorded no child session');
  await endSession(session);
  return { parent: session.workflowId, child };
}

/** The agent the `handoff` shape hands its conversation to. */
const BILLING = defineAgent({ name: 'billing', description: 'Answers billing questions.', model: 'anthropic:golden-billing', tools: [] });

const start = (agent: LocalAgent, model: string, extra: Record<string, unknown> = {}) =>
  startSession(agent.client, agent.env, { model: `anthropic:${model}`, workflowId: `golden-${model}`, idleTimeoutMs: 60_000, ...extra });

const SCENARIOS: Record<string, Scenario> = {
  /** Two steps: tool calls, then the answer. */
  'normal-turn': async (agent) => {
    agent.llm.script('normal-turn', calculatorCalls, { kind: 'text', text: '42 and 1024.' });
    const session = await start(agent, 'normal-turn');
    await sendAndWait(session, 'compute');
    await endSession(session);
    return session.workflowId;
  },
  /** 529 twice, then an answer: the retries live in the activity's attempts, not in history. */
  retries: async (agent) => {
    agent.llm.script('retries', { kind: 'status', status: 529 }, { kind: 'status', status: 503 }, { kind: 'text', text: 'finally' });
    const session = await start(agent, 'retries', { retryPolicy: { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 200, budgetMs: 10_000, maxServerWaitMs: 60_000 } });
    await sendAndWait(session, 'hello');
    await endSession(session);
    return session.workflowId;
  },
  /** A side-effecting call times out: ok, TOOL_OUTCOME_UNKNOWN, TOOL_NOT_STARTED, then a next turn. */
  'compensated-turn': async (agent, target) => {
    agent.llm.script(
      'compensated-turn',
      {
        kind: 'tool_calls',
        calls: [
          { id: 'toolu_comp_1', name: 'calculator', input: { expression: '1+1' } },
          { id: 'toolu_comp_2', name: 'http_request', input: { method: 'POST', url: `${target}/hang`, body: '{}' } },
          { id: 'toolu_comp_3', name: 'calculator', input: { expression: '2+2' } },
        ],
      },
      { kind: 'text', text: 'The order may or may not exist; let me check before retrying.' },
    );
    const session = await start(agent, 'compensated-turn', { toolTimeouts: { http_request: 1_000 } });
    await sendAndWait(session, 'order');
    await sendAndWait(session, 'what happened?');
    await endSession(session);
    return session.workflowId;
  },
  /** Cancelled while the LLM streams. */
  'cancelled-turn': async (agent) => {
    agent.llm.script('cancelled-turn', { kind: 'text', text: 'thinking…', stall: { ms: -1, pingEveryMs: 500 } });
    const session = await start(agent, 'cancelled-turn');
    const update = await session.startUpdate(sendUpdate, { args: [{ text: 'think hard' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    await agent.llm.waitForRequests(1, { model: 'cancelled-turn' });
    await sleep(500);
    await session.executeUpdate(cancelTurnUpdate);
    await update.result().catch(() => undefined);
    await endSession(session);
    return session.workflowId;
  },
  /** A side-effecting call waits for a human, who approves it. */
  approval: async (agent, target) => {
    agent.llm.script(
      'approval',
      { kind: 'tool_calls', calls: [{ id: 'toolu_appr_1', name: 'http_request', input: { method: 'POST', url: `${target}/ok`, body: '{}' } }] },
      { kind: 'text', text: 'Done.' },
    );
    const session = await start(agent, 'approval', { approvalRequired: ['http_request'] });
    const update = await session.startUpdate(sendUpdate, { args: [{ text: 'post it' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    for (let i = 0; (await session.query(stateQuery)).pendingApprovals.length === 0; i++) {
      if (i > 200) throw new Error('no approval was requested');
      await sleep(50);
    }
    await session.executeUpdate(decideApprovalUpdate, { args: [{ callId: 'toolu_appr_1', approved: true }] });
    await update.result();
    await endSession(session);
    return session.workflowId;
  },
  /**
   * A read-only call an --approve-tools pattern names waits for a human, who approves it;
   * then the answer.
   */
  'approval-read-only-named': async (agent) => {
    agent.llm.script(
      'approval-read-only-named',
      { kind: 'tool_calls', calls: [{ id: 'toolu_appr_ro_1', name: 'calculator', input: { expression: '6*7' } }] },
      { kind: 'text', text: '42.' },
    );
    const session = await start(agent, 'approval-read-only-named', { approvalRequired: ['calculator'] });
    const update = await session.startUpdate(sendUpdate, { args: [{ text: 'compute it' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    await waitUntil('an approval request', async () => (await session.query(stateQuery)).pendingApprovals.length > 0);
    await session.executeUpdate(decideApprovalUpdate, { args: [{ callId: 'toolu_appr_ro_1', approved: true }] });
    await update.result();
    await endSession(session);
    return session.workflowId;
  },
  /** The first run of a session that continued as new between its turns. */
  'continue-as-new': async (agent) => {
    agent.llm.script('continue-as-new', calculatorCalls, { kind: 'text', text: '42 and 1024.' }, { kind: 'text', text: 'Still here.' });
    const session = await start(agent, 'continue-as-new', { continueAsNewAfterEvents: 20 });
    await sendAndWait(session, 'compute');
    await sendAndWait(session, 'and now?');
    await endSession(session);
    return { workflowId: session.workflowId, runId: session.firstExecutionRunId };
  },
  /** The LLM call fails on every attempt: the ladder gives up and the turn fails. */
  'llm-failed': async (agent) => {
    agent.llm.script('llm-failed', ...Array.from({ length: 4 }, () => ({ kind: 'status' as const, status: 529 })));
    const session = await start(agent, 'llm-failed', { retryPolicy: { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 200, budgetMs: 10_000, maxServerWaitMs: 60_000 } });
    await sendAndWait(session, 'hello');
    await endSession(session);
    return session.workflowId;
  },
  /** Cancelled while the LLM call waits for its retry. */
  'retry-cancelled': async (agent) => {
    agent.llm.script('retry-cancelled', { kind: 'status', status: 529, headers: { 'retry-after': '30' } }, { kind: 'text', text: 'never sent' });
    const session = await start(agent, 'retry-cancelled');
    const update = await session.startUpdate(sendUpdate, { args: [{ text: 'hello' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    await agent.llm.waitForRequests(1, { model: 'retry-cancelled' });
    await waitUntil('the call to wait for its retry', async () => (await session.describe()).raw.pendingActivities?.[0]?.attempt === 2);
    await session.executeUpdate(cancelTurnUpdate);
    await update.result().catch(() => undefined);
    await endSession(session);
    return session.workflowId;
  },
  /**
   * The retry policy changed while the LLM call waits for its retry: the Update lands
   * between two attempts of one pending activity.
   */
  'retry-policy-mid-call': async (agent) => {
    agent.llm.script('retry-policy-mid-call', { kind: 'status', status: 529, headers: { 'retry-after': '2' } }, { kind: 'text', text: 'recovered' });
    const session = await start(agent, 'retry-policy-mid-call');
    const update = await session.startUpdate(sendUpdate, { args: [{ text: 'hello' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    await agent.llm.waitForRequests(1, { model: 'retry-policy-mid-call' });
    await waitUntil('the call to wait for its retry', async () => (await session.describe()).raw.pendingActivities?.[0]?.attempt === 2);
    await session.executeUpdate(setRetryPolicyUpdate, { args: [{ maxRetries: 3, baseDelayMs: 1_000, maxDelayMs: 30_000, budgetMs: 240_000, maxServerWaitMs: 60_000 }] });
    await update.result();
    await endSession(session);
    return session.workflowId;
  },
  /** A human denies a side-effecting call: it does not run, and the model reads why. */
  'approval-denied': async (agent, target) => {
    agent.llm.script(
      'approval-denied',
      { kind: 'tool_calls', calls: [{ id: 'toolu_deny_1', name: 'http_request', input: { method: 'POST', url: `${target}/ok`, body: '{}' } }] },
      { kind: 'text', text: 'Understood, not posted.' },
    );
    const session = await start(agent, 'approval-denied', { approvalRequired: ['http_request'] });
    const update = await session.startUpdate(sendUpdate, { args: [{ text: 'post it' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    await waitUntil('an approval request', async () => (await session.query(stateQuery)).pendingApprovals.length > 0);
    await session.executeUpdate(decideApprovalUpdate, { args: [{ callId: 'toolu_deny_1', approved: false, reason: 'not today' }] });
    await update.result();
    await endSession(session);
    return session.workflowId;
  },
  /** Nobody decides in time: the approval timer fires and the call does not run. */
  'approval-timed-out': async (agent, target) => {
    agent.llm.script(
      'approval-timed-out',
      { kind: 'tool_calls', calls: [{ id: 'toolu_late_1', name: 'http_request', input: { method: 'POST', url: `${target}/ok`, body: '{}' } }] },
      { kind: 'text', text: 'Nobody approved it.' },
    );
    const session = await start(agent, 'approval-timed-out', { approvalRequired: ['http_request'], approvalTimeoutMs: 1_000 });
    await sendAndWait(session, 'post it');
    await endSession(session);
    return session.workflowId;
  },
  /**
   * Two turns whose calls carry one id, each approved: turn 2's call waits for its own
   * decision and gets its own Idempotency-Key (both keyed by the call's position).
   */
  'approval-reused-call-id': async (agent, target) => {
    const call = (path: string) => ({ kind: 'tool_calls' as const, calls: [{ id: 'toolu_reused_1', name: 'http_request', input: { method: 'POST', url: `${target}/${path}`, body: '{}' } }] });
    agent.llm.script('approval-reused-call-id', call('first'), { kind: 'text', text: 'Posted.' }, call('second'), { kind: 'text', text: 'Posted again.' });
    const session = await start(agent, 'approval-reused-call-id', { approvalRequired: ['http_request'] });
    for (const [turn, text] of [[1, 'post it'], [2, 'post another']] as const) {
      const update = await session.startUpdate(sendUpdate, { args: [{ text }], waitForStage: WorkflowUpdateStage.ACCEPTED });
      await waitUntil(`an approval request in turn ${turn}`, async () => (await session.query(stateQuery)).pendingApprovals.some((a) => a.turn === turn));
      await session.executeUpdate(decideApprovalUpdate, { args: [{ callId: 'toolu_reused_1', approved: true }] });
      await update.result();
    }
    await endSession(session);
    return session.workflowId;
  },
  /** A session with nothing to do ends on its idle timer. */
  'idle-timeout': async (agent) => {
    agent.llm.script('idle-timeout', { kind: 'text', text: 'Hello.' });
    const session = await start(agent, 'idle-timeout', { idleTimeoutMs: 1_000 });
    await sendAndWait(session, 'hi');
    await session.result();
    return session.workflowId;
  },
  /** Cancelled while a side-effecting call runs: it gets TOOL_OUTCOME_UNKNOWN, the next one TOOL_NOT_STARTED. */
  'cancelled-unknown': async (agent, target) => {
    agent.llm.script(
      'cancelled-unknown',
      {
        kind: 'tool_calls',
        calls: [
          { id: 'toolu_cu_1', name: 'http_request', input: { method: 'POST', url: `${target}/hang`, body: '{}' } },
          { id: 'toolu_cu_2', name: 'calculator', input: { expression: '1+1' } },
        ],
      },
      { kind: 'text', text: 'I will check whether the post went through.' },
    );
    const session = await start(agent, 'cancelled-unknown', { toolTimeouts: { http_request: 3_000 } });
    const update = await session.startUpdate(sendUpdate, { args: [{ text: 'post it' }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    await waitUntil('the post to be dispatched', async () => (await readLog(session)).some((e) => e.type === 'tool/call'));
    await session.executeUpdate(cancelTurnUpdate);
    await update.result().catch(() => undefined);
    await sendAndWait(session, 'what happened?');
    await endSession(session);
    return session.workflowId;
  },
  /** A turn of 11 steps under the default step limit, which is more than that. */
  'eleven-steps-default-limit': async (agent) => {
    const steps = Array.from({ length: 11 }, (_, i) => ({ kind: 'tool_calls' as const, calls: [{ id: `toolu_eleven_${i + 1}`, name: 'calculator', input: { expression: `${i}+1` } }] }));
    agent.llm.script('eleven-steps-default-limit', ...steps, { kind: 'text', text: 'Counted to eleven.' });
    const session = await start(agent, 'eleven-steps-default-limit');
    const outcome = await sendAndWait(session, 'count');
    if (outcome.reason !== 'answered') throw new Error(`the 11-step turn ended ${JSON.stringify(outcome)}`);
    await endSession(session);
    return session.workflowId;
  },
  /**
   * Structured output: a tool call, then an answer that does not match the session's
   * schema, recorded as output/rejected and repaired in a third step.
   */
  'repaired-turn': async (agent) => {
    const schema = { type: 'object', properties: { result: { type: 'integer', minimum: 0 } }, required: ['result'], additionalProperties: false };
    agent.llm.script(
      'repaired-turn',
      { kind: 'tool_calls', calls: [{ id: 'toolu_repair_1', name: 'calculator', input: { expression: '6*7' } }] },
      { kind: 'json', value: { result: -42 } },
      { kind: 'json', value: { result: 42 } },
    );
    const session = await start(agent, 'repaired-turn', { outputSchema: schema });
    const outcome = await session.executeUpdate(sendUpdate, { args: [{ text: 'compute 6*7' }] });
    if (outcome.output === undefined) throw new Error(`the repaired turn ended ${JSON.stringify(outcome)}`);
    await endSession(session);
    return session.workflowId;
  },
  /** MCP tools: listed into the log before the first LLM call, an echo call, then refresh-tools and a second turn. */
  'mcp-tools': async (agent) => {
    agent.llm.script(
      'mcp-tools',
      { kind: 'tool_calls', calls: [{ id: 'toolu_mcp_1', name: 'mcp__everything__echo', input: { message: 'recorded' } }] },
      { kind: 'text', text: 'Echoed.' },
      { kind: 'text', text: 'Same tools.' },
    );
    const session = await start(agent, 'mcp-tools', { mcp: ['everything'] });
    await sendAndWait(session, 'echo');
    await session.executeUpdate(refreshToolsUpdate);
    await sendAndWait(session, 'again');
    await endSession(session);
    return session.workflowId;
  },
  /**
   * An MCP call whose arguments the listed schema refuses: the workflow checks only that they
   * are a bounded object and schedules callMcpTool, whose worker-side check answers the error
   * the model reads; then the answer.
   */
  'mcp-invalid-arguments': async (agent) => {
    agent.llm.script(
      'mcp-invalid-arguments',
      { kind: 'tool_calls', calls: [{ id: 'toolu_mcp_bad_1', name: 'mcp__everything__echo', input: { message: 42 } }] },
      { kind: 'text', text: 'The echo refused a number.' },
    );
    const session = await start(agent, 'mcp-invalid-arguments', { mcp: ['everything'] });
    await sendAndWait(session, 'echo 42');
    await endSession(session);
    return session.workflowId;
  },
  /**
   * Three turns under a 10 000-token window: the second turn's answer reports 8 000 input
   * tokens, so the third turn compacts (through the second turn's end) before its step.
   */
  compaction: async (agent) => {
    agent.llm.script(
      'compaction',
      { ...calculatorCalls, usage: { inputTokens: 1_000, outputTokens: 20 } },
      { kind: 'text', text: '42 and 1024.', usage: { inputTokens: 1_200, outputTokens: 10 } },
      { kind: 'text', text: 'Noted.', usage: { inputTokens: 8_000, outputTokens: 10 } },
      { kind: 'text', text: 'After the summary.', usage: { inputTokens: 600, outputTokens: 10 } },
    );
    agent.llm.scriptCompaction('compaction', { kind: 'text', text: 'The user asked for 6*7 and 2^10 (42 and 1024), then said to note it.' });
    const session = await start(agent, 'compaction', { contextWindow: 10_000 });
    await sendAndWait(session, 'compute');
    await sendAndWait(session, 'note it');
    await sendAndWait(session, 'and now?');
    await endSession(session);
    return session.workflowId;
  },
  /**
   * The second run of a session that compacted in its first: its input carries only the
   * tail after the cut (the compaction among it, seqs kept), and it compacts again over it.
   */
  'compacted-continued': async (agent) => {
    agent.llm.script(
      'compacted-continued',
      { ...calculatorCalls, usage: { inputTokens: 700, outputTokens: 20 } },
      { kind: 'text', text: '42 and 1024.', usage: { inputTokens: 8_000, outputTokens: 10 } },
      { kind: 'text', text: 'After the first summary.', usage: { inputTokens: 600, outputTokens: 10 } },
      { kind: 'text', text: 'Noted.', usage: { inputTokens: 8_000, outputTokens: 10 } },
      { kind: 'text', text: 'After the second summary.', usage: { inputTokens: 600, outputTokens: 10 } },
    );
    agent.llm.scriptCompaction(
      'compacted-continued',
      { kind: 'text', text: 'The user asked for 6*7 and 2^10: 42 and 1024.' },
      { kind: 'text', text: 'The user asked for 6*7 and 2^10 (42 and 1024), then to go on, then to note it.' },
    );
    const session = await start(agent, 'compacted-continued', { contextWindow: 10_000, continueAsNewAfterEvents: COMPACTED_RUN_EVENTS });
    await sendAndWait(session, 'compute');
    await sendAndWait(session, 'go on');
    await waitUntil('a second run', async () => (await session.describe()).runId !== session.firstExecutionRunId);
    const secondRun = (await session.describe()).runId;
    await sendAndWait(session, 'note it');
    await sendAndWait(session, 'and now?');
    await endSession(session);
    return { workflowId: session.workflowId, runId: secondRun };
  },
  /**
   * A session started with its first message (update-with-start, as `run` does), two turns
   * of three steps and one: its status and step count are upserted when a turn starts and
   * ends, not at every step.
   */
  'status-per-turn': async (agent) => {
    agent.llm.script('status-per-turn', calculatorCalls, calculatorCalls, { kind: 'text', text: '42 and 1024, twice.' }, { kind: 'text', text: 'Yes.' });
    const { handle, turn } = await startSessionWithMessage(agent.client, agent.env, { model: 'anthropic:status-per-turn', workflowId: 'golden-status-per-turn', idleTimeoutMs: 60_000 }, 'compute twice');
    await turn();
    await sendAndWait(handle, 'sure?');
    await endSession(handle);
    return handle.workflowId;
  },
  /**
   * Revision 2 (contracts/session-revision.ts): a session started with its first message and
   * its search attributes, two turns and an end. Nothing is upserted at the start nor when
   * the first turn starts (the start request says `running`); the idle timer the first wait
   * started still runs when the second message comes, and is not started again.
   */
  'revision-2-turns': async (agent) => {
    agent.llm.script('revision-2-turns', calculatorCalls, { kind: 'text', text: '42 and 1024.' }, { kind: 'text', text: 'Yes.' });
    const { handle, turn } = await startSessionWithMessage(agent.client, agent.env, { model: 'anthropic:revision-2-turns', workflowId: 'golden-revision-2-turns', idleTimeoutMs: 60_000, revision: 2 }, 'compute');
    await turn();
    await sendAndWait(handle, 'sure?');
    await endSession(handle);
    return handle.workflowId;
  },
  /**
   * A fork whose first request is under `compactAt` of the window but leaves the answer too
   * little of it: the step compacts first, its call scheduled under an id naming the cut.
   */
  'compaction-answer-room': async (agent) => {
    agent.llm.script('compaction-answer-room', { kind: 'text', text: 'Room enough.' });
    agent.llm.scriptCompaction('compaction-answer-room', { kind: 'text', text: 'The user had a file of q read.' });
    // About 5 000 tokens of a 10 000-token window: under 0.75 of it, but 5 000 + 6 000 passes it.
    const session = await start(agent, 'compaction-answer-room', { contextWindow: 10_000, maxTokens: 6_000, fork: { fromWorkflowId: 'golden-source', events: turnThatRead('q'.repeat(20_000)) } });
    await sendAndWait(session, 'what was in it?');
    await endSession(session);
    return session.workflowId;
  },
  /**
   * A fork whose provider reported 12 input tokens for the request that carried a 28 000-
   * character file: by the report the next request is tiny, by its size past 0.75 of the
   * window, so the step compacts first.
   */
  'compaction-size-floor': async (agent) => {
    agent.llm.script('compaction-size-floor', { kind: 'text', text: 'It was all q.', usage: { inputTokens: 12, outputTokens: 5 } });
    agent.llm.scriptCompaction('compaction-size-floor', { kind: 'text', text: 'The user had a file of q read.', usage: { inputTokens: 12, outputTokens: 5 } });
    const underReported = turnThatRead('q'.repeat(28_000)).map((e) => (e.type === 'assistant' ? { ...e, message: { ...e.message, usage: { inputTokens: 12, outputTokens: 5 } } } : e));
    const session = await start(agent, 'compaction-size-floor', { contextWindow: 8_000, fork: { fromWorkflowId: 'golden-source', events: underReported } });
    await sendAndWait(session, 'what was in it?');
    await endSession(session);
    return session.workflowId;
  },
  /**
   * A compaction that spends past the session's hard limit: the step's own call is then
   * refused, and the turn fails `budget_exceeded`.
   */
  'compaction-past-budget': async (agent) => {
    agent.llm.scriptCompaction('compaction-past-budget', { kind: 'text', text: 'A costly summary.', usage: { inputTokens: 100_000, outputTokens: 5 } });
    const session = await start(agent, 'compaction-past-budget', {
      contextWindow: 8_000,
      budgetTokens: 50_000,
      fork: { fromWorkflowId: 'golden-source', events: turnThatRead('q'.repeat(28_000)) },
    });
    await sendAndWait(session, 'what was in it?');
    await endSession(session);
    return session.workflowId;
  },
  /**
   * The compaction before continue-as-new fails while a message waits: the session runs that
   * message instead of continuing at once, then compacts
   * at the next cut and continues. Its tail is above the 1 MiB a run carries uncompacted.
   */
  'carry-compaction-recheck': async (agent) => {
    const model = 'carry-compaction-recheck';
    agent.llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_carry_1', name: 'calculator', input: { expression: '1+1' } }] }, { kind: 'text', text: 'Two.' }, { kind: 'text', text: 'Answered meanwhile.' });
    agent.llm.scriptCompaction(model, { kind: 'status', status: 400, hold: true }, { kind: 'text', text: 'The user had a large file read, then asked twice more.' });
    const session = await start(agent, model, { continueAsNewAfterEvents: 20, fork: { fromWorkflowId: 'golden-source', events: turnThatRead('x'.repeat(1_100_000)) } });
    await sendAndWait(session, 'what is 1+1?');
    await agent.llm.waitForRequests(1, { model, purpose: 'compact' });
    const meanwhile = sendAndWait(session, 'sent during the compaction');
    await waitUntil('the message queued', async () => (await session.query(stateQuery)).queued === 1);
    agent.llm.release(model);
    await meanwhile;
    await waitUntil('a second run', async () => (await session.describe()).runId !== session.firstExecutionRunId);
    await endSession(session);
    return { workflowId: session.workflowId, runId: session.firstExecutionRunId };
  },
  /**
   * An Update answered in the workflow task that carries a step's tool result: the tool
   * activity starts a `setRetryPolicy` Update and returns at once, so the Update's acceptance
   * and completion and the next LLM call come out of one workflow task. A change to when a
   * step issues its commands within a task (fewer awaits, say) must still replay this. The
   * timing is a race, so sessions are tried until one recorded it.
   */
  'update-beside-tool-result': async (agent) => {
    const model = 'update-beside-tool-result';
    let workflowId = '';
    const local = await startLocalAgent({
      address: agent.env.TEMPORAL_ADDRESS,
      runTool: async (request) => {
        void local.client.workflow.getHandle(workflowId).startUpdate(setRetryPolicyUpdate, { args: ['default'], waitForStage: WorkflowUpdateStage.ACCEPTED }).catch(() => undefined);
        return { code: 'ok', content: `ran ${request.name}` };
      },
    });
    try {
      for (let attempt = 1; attempt <= 20; attempt++) {
        local.llm.script(model, { kind: 'tool_calls', calls: [{ id: `toolu_beside_${attempt}`, name: 'calculator', input: { expression: '1+1' } }] }, { kind: 'text', text: 'Two.' });
        const session = await startSession(local.client, local.env, { model: `anthropic:${model}`, workflowId: `golden-${model}-${attempt}`, idleTimeoutMs: 60_000 });
        workflowId = session.workflowId;
        await sendAndWait(session, 'what is 1+1?');
        await endSession(session);
        await session.result().catch(() => undefined);
        if (updateBesideCommand(await exportHistory(local.client, workflowId))) return workflowId;
      }
      throw new Error('recording: no session of 20 answered the Update in its tool result\'s workflow task');
    } finally {
      await local.close();
    }
  },
  /** A step that calls a sub-agent: the child workflow started, its result awaited, its spend signalled. */
  'sub-agent': async (agent) => (await subAgentSessions(agent, 'sub-agent')).parent,
  /** That child: its parent's task as its one turn, then its answer. */
  'sub-agent-child': async (agent) => (await subAgentSessions(agent, 'sub-agent-child')).child,
  /**
   * A turn answered, then a turn whose step hands the conversation to billing: the session
   * started (ABANDON), the call answered, `session/handed-off`, the turn ended `handoff`, and
   * the session ended. Under its file's name: the target's id is derived from it.
   */
  handoff: async (agent) => {
    agent.llm.script('handoff', { kind: 'text', text: 'Hello, how can I help?' }, { kind: 'tool_calls', calls: [{ id: 'toolu_rec_handoff', name: 'handoff__billing', input: { reason: 'a billing question' } }] });
    agent.llm.script('golden-billing', { kind: 'text', text: 'Refunded.' });
    const session = await start(agent, 'handoff', { handoffs: ['billing'], workflowId: 'handoff' });
    await sendAndWait(session, 'Hi.');
    const answered = await sendAndWait(session, 'I was charged twice.');
    if (!answered.answeredBy) throw new Error('recording: the conversation was not handed over');
    await endSession(agent.client.workflow.getHandle(answered.answeredBy));
    return session.workflowId;
  },
  /** A fork cut inside a step of another session: its open tail is repaired. */
  fork: async (agent) => {
    agent.llm.script('fork-source', calculatorCalls, { kind: 'text', text: 'done' });
    const source = await start(agent, 'fork-source');
    await sendAndWait(source, 'compute');
    const cut = (await readLog(source)).find((e) => e.type === 'tool/call')?.seq;
    const fork = await forkSession(agent.client, agent.env, source.workflowId, { atSeq: cut, workflowId: 'golden-fork' });
    agent.llm.script('fork-source', { kind: 'text', text: 'resumed' });
    await sendAndWait(fork, 'go on');
    await endSession(fork);
    await endSession(source);
    return fork.workflowId;
  },
};

/** Polls `check` (a Query, a describe) until it holds; the recording fails with `what` after 10 s. */
async function waitUntil(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; !(await check()); i++) {
    if (i > 200) throw new Error(`recording: no ${what} after 10 s`);
    await sleep(50);
  }
}

/** The MCP servers of the `mcp-tools` scenario: the everything server from npm, over stdio. */
async function mcpConfig(): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'record-histories-')), 'mcp.json');
  const everything = path.join(PROJECT_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  await writeFile(file, JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } } }));
  return file;
}

/** A local HTTP target for http_request: `/hang` never answers, anything else answers 201. */
async function startTarget(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/hang')) return;
    res.writeHead(201, { 'content-type': 'application/json' }).end('{"created":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('no target address');
  return { url: `http://127.0.0.1:${address.port}`, server };
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const server = await startDevServer({ port: await findFreePort(), uiPort: false, output: 'ignore' });
  const target = await startTarget();
  const agent = await startLocalAgent({ address: server.address, env: { AGENT_HTTP_ALLOWLIST: new URL(target.url).host, AGENT_MCP_CONFIG: await mcpConfig() }, agents: [RESEARCHER, BILLING] });
  try {
    for (const [name, scenario] of Object.entries(SCENARIOS)) {
      if (only.length > 0 && !only.includes(name)) continue;
      const recorded = await scenario(agent, target.url);
      const { workflowId, runId } = typeof recorded === 'string' ? { workflowId: recorded, runId: undefined } : recorded;
      await agent.client.workflow.getHandle(workflowId).result().catch(() => undefined);
      const file = path.join(HISTORIES_DIR, `${name}.json`);
      await writeFile(file, `${await exportHistory(agent.client, workflowId, runId)}\n`);
      console.log(`recorded ${path.relative(PROJECT_ROOT, file)}`);
    }
  } finally {
    await agent.close();
    target.server.closeAllConnections();
    target.server.close();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
