import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forkSession, readLog, sendAndWait, startSession } from '../client/sessions';
import { stateQuery, type SessionInput } from '../contracts/api';
import type { LlmCallInput } from '../contracts/llm-call';
import type { SessionEvent } from '../contracts/session-log';
import type { ScriptedReply } from '../testing/scripted-llm/script';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runInProcess } from './support/cli-in-process';
import { eventually } from './support/eventually';
import { useTempDir } from './support/temp-dir';
import { startWorkerProcess } from './support/worker-processes';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

/**
 * Durable model fallback on a real worker and dev server, with the scripted LLM as all
 * three providers (docs/fallback.md): a step whose call fails on the provider's side goes
 * to the next model in the same step, the log says so, continuation data stays with the
 * provider that made it, the spend is the answering model's, and the session goes back to
 * its first model at the next turn (or after fallbackReturnAfterMs). The decision itself is
 * test/model-fallback-decision.test.ts.
 */

const TAG = Date.now();
let n = 0;
/** A model name of its own per use: the scripted LLM keeps one reply queue per model. */
const fresh = (name: string) => `${name}-${TAG}-${++n}`;

/** Priced by the test's AGENT_PRICES_FILE (USD per million tokens): the fallback ten times cheaper than the first model. */
const PRICED_FIRST = `anthropic:fb-priced-first-${TAG}`;
const PRICED_FALLBACK = `openai:fb-priced-fallback-${TAG}`;

const dir = useTempDir('fallback-');
const prices = () => path.join(dir(), 'prices.json');
beforeAll(async () => {
  await writeFile(prices(), JSON.stringify({ models: { [PRICED_FIRST]: { input: 10, output: 100 }, [PRICED_FALLBACK]: { input: 1, output: 10 } } }));
});
const h = useAgentHarness(() => ({ env: { AGENT_PRICES_FILE: prices() } }));

/** One attempt per call: each ladder ends on its first failure, as a short policy would after its retries. */
const start = (input: Partial<SessionInput> & { model: string }) => startSession(h().client, h().env, { idleTimeoutMs: 120_000, retryPolicy: null, ...input });
const nameOf = (ref: string) => ref.slice(ref.indexOf(':') + 1);
const script = (ref: string, ...replies: ScriptedReply[]) => h().llm.script(nameOf(ref), ...replies);
const requestsTo = (ref: string) => h().llm.requests({ model: nameOf(ref) });

/** The CLI's command line, run in this process (client/command-line.ts, as the CLI runs it). */
const cli = (...args: string[]) => runInProcess(args, clientEnvOf(h()));

type Handle = Awaited<ReturnType<typeof start>>;
const switches = (log: SessionEvent[]) => log.flatMap((e) => (e.type === 'model/switched' ? [{ turn: e.turn, step: e.step, from: e.from, to: e.to, why: e.why, failure: e.failure?.type }] : []));
const stepModels = (log: SessionEvent[]) => log.flatMap((e) => (e.type === 'step/start' ? [`${e.turn}.${e.step} ${e.model}`] : []));

/** The session's LLM activities as history has them: each one's summary (what the UI lists) and input. */
async function llmActivities(session: Handle): Promise<{ summary: string; input: LlmCallInput }[]> {
  const { events } = await session.fetchHistory();
  return (events ?? []).flatMap((e) => {
    const scheduled = e.activityTaskScheduledEventAttributes;
    const data = e.userMetadata?.summary?.data;
    if (scheduled?.activityType?.name !== 'callLlm' || !data) return [];
    const [input] = (scheduled.input?.payloads ?? []).map((p) => defaultPayloadConverter.fromPayload<LlmCallInput>(p));
    return input ? [{ summary: JSON.parse(Buffer.from(data).toString('utf8')) as string, input }] : [];
  });
}

const calculator: ScriptedReply = { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '6*7' } }] };

describe('a step whose call fails on the provider goes to the next model, on every provider', () => {
  it('anthropic overloaded → openai: the same step, the log and the activity summary say which model answered and why', async () => {
    const [first, second, third] = [`anthropic:${fresh('fb-claude')}`, `openai:${fresh('fb-gpt')}`, `google:${fresh('fb-gemini')}`];
    script(first, { kind: 'status', status: 529 });
    script(second, { kind: 'text', text: 'answered by the fallback' });
    const session = await start({ model: first, fallbacks: [second, third], fallbackAfterMs: 5_000 });
    expect(await sendAndWait(session, 'hi')).toMatchObject({ status: 'completed' });

    const log = await readLog(session);
    expect(stepModels(log)).toEqual([`1.1 ${first}`]);
    expect(switches(log)).toEqual([{ turn: 1, step: 1, from: first, to: second, why: 'fallback', failure: 'overloaded' }]);
    expect(log.filter((e) => e.type === 'assistant').map((e) => e.type === 'assistant' && e.message.text)).toEqual(['answered by the fallback']);
    expect(requestsTo(third)).toHaveLength(0);

    // Each call has a model after it, so each may stop its ladder early, by the session's fallbackAfterMs.
    const calls = await llmActivities(session);
    expect(calls.map((c) => c.summary)).toEqual([`step 1 · llm ${first}`, `step 1 · llm ${second} · fallback after overloaded`]);
    expect(calls.map((c) => [c.input.model, c.input.fallbackAfterMs])).toEqual([
      [first, 5_000],
      [second, 5_000],
    ]);
    // `log` shows the switch, and `state` (`show`) the model in force until the next turn.
    const logged = await cli('log', session.workflowId);
    expect(logged.stdout).toContain(`turn 1 · step 1 · model ${first} → ${second} · fallback after overloaded: callLlm: anthropic POST /v1/messages → 529`);
    expect(await session.query(stateQuery)).toMatchObject({ model: first, modelInForce: second });
    expect((await cli('show', session.workflowId)).stdout).toMatch(new RegExp(`model +${first} · now on its fallback ${second}`));
  });

  it('openai 5xx → google: the last model of the chain is called without fallbackAfterMs (nothing could take its failure over)', async () => {
    const [first, second] = [`openai:${fresh('fb-gpt')}`, `google:${fresh('fb-gemini')}`];
    script(first, { kind: 'status', status: 500 });
    script(second, { kind: 'text', text: 'gemini answers' });
    const session = await start({ model: first, fallbacks: [second] });
    expect(await sendAndWait(session, 'hi')).toMatchObject({ status: 'completed' });

    expect(switches(await readLog(session))).toEqual([{ turn: 1, step: 1, from: first, to: second, why: 'fallback', failure: 'server_error' }]);
    const calls = await llmActivities(session);
    expect(calls.map((c) => c.summary)).toEqual([`step 1 · llm ${first}`, `step 1 · llm ${second} · fallback after server_error`]);
    // The session's own fallbackAfterMs is absent: the default.
    expect(calls.map((c) => c.input.fallbackAfterMs)).toEqual([30_000, undefined]);
  });

  it("google network failure → anthropic: Gemini's thought signature stays behind; the step's tool result goes along", async () => {
    const [first, second] = [`google:${fresh('gemini-3-pro-preview-fb')}`, `anthropic:${fresh('fb-claude')}`];
    script(first, calculator, { kind: 'reset' });
    script(second, { kind: 'text', text: 'It is 42.' });
    const session = await start({ model: first, fallbacks: [second] });
    expect(await sendAndWait(session, 'what is 6*7?')).toMatchObject({ status: 'completed' });

    const log = await readLog(session);
    expect(switches(log)).toEqual([{ turn: 1, step: 2, from: first, to: second, why: 'fallback', failure: 'network_error' }]);
    const signed = log.find((e) => e.type === 'assistant');
    expect(signed?.type === 'assistant' && signed.message.providerData?.provider).toBe('google');
    const [request] = requestsTo(second);
    expect(request?.rawBody).not.toContain('thoughtSignature');
    expect(request?.rawBody).toContain('"tool_use"');
    expect(requestsTo(second).filter((r) => r.replyKind === 'unpaired')).toHaveLength(0);
  });

  it('the last model failing fails the step and the turn with its own failure, after one switch', async () => {
    const [first, second] = [`anthropic:${fresh('fb-claude')}`, `openai:${fresh('fb-gpt')}`];
    script(first, { kind: 'status', status: 529 });
    script(second, { kind: 'status', status: 503 });
    const session = await start({ model: first, fallbacks: [second] });
    expect(await sendAndWait(session, 'hi')).toMatchObject({ status: 'failed', failure: { type: 'server_error' } });
    const log = await readLog(session);
    expect(switches(log)).toEqual([{ turn: 1, step: 1, from: first, to: second, why: 'fallback', failure: 'overloaded' }]);
    expect(log.find((e) => e.type === 'step/end')).toMatchObject({ status: 'failed', failure: { type: 'server_error' } });
  });
});

describe('never on a failure of the request or the account', () => {
  it.each([
    ['auth_error', { kind: 'status', status: 401 }],
    ['invalid_request', { kind: 'status', status: 400 }],
    ['content_blocked', { kind: 'refusal', blockReason: 'PROHIBITED_CONTENT' }],
  ] as const)('%s: the turn fails with it, and the fallback is never called', async (type, reply) => {
    const [first, second] = [`google:${fresh('fb-gemini')}`, `openai:${fresh('fb-gpt')}`];
    script(first, reply);
    script(second, { kind: 'text', text: 'a fallback must never get here' });
    const session = await start({ model: first, fallbacks: [second] });
    expect(await sendAndWait(session, 'hi')).toMatchObject({ status: 'failed', failure: { type } });
    expect(switches(await readLog(session))).toEqual([]);
    expect(requestsTo(second)).toHaveLength(0);
  });
});

describe('continuation data, prices and the return to the first model', () => {
  it("anthropic's signed thinking is not sent to openai; the recovered anthropic gets the next turn, and its thinking back", async () => {
    const [first, second] = [`anthropic:${fresh('fb-claude-thinking')}`, `openai:${fresh('fb-gpt')}`];
    script(first, { ...calculator, thinking: 'The calculator will do.' }, { kind: 'status', status: 529 }, { kind: 'text', thinking: 'Still 42.', text: 'Yes, 42.' });
    script(second, { kind: 'text', text: 'It is 42.' });
    const session = await start({ model: first, fallbacks: [second], reasoning: 'low', maxTokens: 1_000 });
    expect(await sendAndWait(session, 'what is 6*7?')).toMatchObject({ status: 'completed' });
    expect(await sendAndWait(session, 'sure?')).toMatchObject({ status: 'completed' });

    const log = await readLog(session);
    expect(stepModels(log)).toEqual([`1.1 ${first}`, `1.2 ${first}`, `2.1 ${first}`]);
    expect(switches(log)).toEqual([
      { turn: 1, step: 2, from: first, to: second, why: 'fallback', failure: 'overloaded' },
      { turn: 2, step: 1, from: second, to: first, why: 'return', failure: undefined },
    ]);
    // The return is recorded before the step/start that names the first model again.
    const returned = log.findIndex((e) => e.type === 'model/switched' && e.why === 'return');
    expect(log[returned + 1]).toMatchObject({ type: 'step/start', turn: 2, step: 1, model: first });

    const [toOpenai] = requestsTo(second);
    expect(toOpenai?.rawBody).not.toContain('The calculator will do.');
    expect(toOpenai?.rawBody).not.toContain('signature');
    const backToAnthropic = requestsTo(first).at(-1)?.body as { messages: { role: string; content: { type: string; thinking?: string; signature?: string }[] }[] };
    const [withThinking] = backToAnthropic.messages.filter((m) => m.role === 'assistant');
    expect(withThinking?.content[0]).toMatchObject({ type: 'thinking', thinking: 'The calculator will do.', signature: expect.any(String) });
    expect(requestsTo(first).map((r) => r.replyKind)).toEqual(['tool_calls', 'status', 'text']);
    expect(await session.query(stateQuery)).not.toHaveProperty('modelInForce');
  });

  it("a fallback step costs the fallback's price, and the session's spend adds it", async () => {
    script(PRICED_FIRST, { kind: 'status', status: 529 });
    // 1M input tokens and 100k output at $1 and $10 per million: $2 (at the first model's prices it would be $20).
    script(PRICED_FALLBACK, { kind: 'text', text: 'cheap', usage: { inputTokens: 1_000_000, outputTokens: 100_000 } });
    const session = await start({ model: PRICED_FIRST, fallbacks: [PRICED_FALLBACK] });
    expect(await sendAndWait(session, 'hi')).toMatchObject({ status: 'completed' });
    const answer = (await readLog(session)).find((e) => e.type === 'assistant');
    expect(answer?.type === 'assistant' && answer.message.costUsd).toBeCloseTo(2, 9);
    expect((await session.query(stateQuery)).spend.costUsd).toBeCloseTo(2, 9);
  });

  it('with fallbackReturnAfterMs: back to the first model at the first step that starts that long after the switch, within the turn', async () => {
    const [first, second] = [`anthropic:${fresh('fb-claude')}`, `openai:${fresh('fb-gpt')}`];
    script(first, { kind: 'status', status: 529 }, { kind: 'text', text: 'back on the first model' });
    // The fallback's answer arrives after the return time has passed (the scripted server's own delay).
    script(second, { ...calculator, delayMs: 1_200 });
    const session = await start({ model: first, fallbacks: [second], fallbackReturnAfterMs: 1_000 });
    expect(await sendAndWait(session, 'what is 6*7?')).toMatchObject({ status: 'completed' });

    const log = await readLog(session);
    expect(switches(log)).toEqual([
      { turn: 1, step: 1, from: first, to: second, why: 'fallback', failure: 'overloaded' },
      { turn: 1, step: 2, from: second, to: first, why: 'return', failure: undefined },
    ]);
    expect(stepModels(log)).toEqual([`1.1 ${first}`, `1.2 ${first}`]);
  });

  it('with a long fallbackReturnAfterMs the switch outlasts its turn, and continue-as-new carries it', async () => {
    const [first, second] = [`anthropic:${fresh('fb-claude')}`, `openai:${fresh('fb-gpt')}`];
    script(first, { kind: 'status', status: 529 });
    script(second, { kind: 'text', text: 'one' }, { kind: 'text', text: 'two' });
    const session = await start({ model: first, fallbacks: [second], fallbackReturnAfterMs: 600_000, continueAsNewAfterEvents: 20 });
    const firstRun = (await session.describe()).runId;
    expect(await sendAndWait(session, 'one')).toMatchObject({ status: 'completed' });
    await eventually('the session to continue as new', async () => ((await h().client.workflow.getHandle(session.workflowId).describe()).runId !== firstRun ? true : undefined), 10_000);

    const next = h().client.workflow.getHandle(session.workflowId);
    expect(await next.query(stateQuery)).toMatchObject({ runs: 2, model: first, modelInForce: second });
    expect(await sendAndWait(next, 'two')).toMatchObject({ status: 'completed' });
    expect(stepModels(await readLog(next))).toEqual([`1.1 ${first}`, `2.1 ${second}`]);
    expect(requestsTo(first)).toHaveLength(1);

    // A fork starts on the first model, whatever its source is on.
    script(first, { kind: 'text', text: 'the fork is on the first model' });
    const fork = await forkSession(h().client, h().env, session.workflowId);
    expect((await fork.query(stateQuery)).modelInForce).toBeUndefined();
    expect(await sendAndWait(fork, 'three')).toMatchObject({ status: 'completed' });
    expect(stepModels(await readLog(fork)).at(-1)).toBe(`3.1 ${first}`);
  });

  it('a fallback in force when the run continues as new is carried, and the next run records its return at the next turn', async () => {
    const [first, second] = [`anthropic:${fresh('fb-claude')}`, `openai:${fresh('fb-gpt')}`];
    script(first, { kind: 'status', status: 529 }, { kind: 'text', text: 'recovered' });
    script(second, { kind: 'text', text: 'one' });
    const session = await start({ model: first, fallbacks: [second], continueAsNewAfterEvents: 20 });
    const firstRun = (await session.describe()).runId;
    expect(await sendAndWait(session, 'one')).toMatchObject({ status: 'completed' });
    await eventually('the session to continue as new', async () => ((await h().client.workflow.getHandle(session.workflowId).describe()).runId !== firstRun ? true : undefined), 10_000);

    const next = h().client.workflow.getHandle(session.workflowId);
    expect(await next.query(stateQuery)).toMatchObject({ runs: 2, modelInForce: second });
    expect(await sendAndWait(next, 'two')).toMatchObject({ status: 'completed' });
    const log = await readLog(next);
    expect(switches(log)).toEqual([
      { turn: 1, step: 1, from: first, to: second, why: 'fallback', failure: 'overloaded' },
      { turn: 2, step: 1, from: second, to: first, why: 'return', failure: undefined },
    ]);
    expect(stepModels(log)).toEqual([`1.1 ${first}`, `2.1 ${first}`]);
    expect(await next.query(stateQuery)).not.toHaveProperty('modelInForce');
  });

  it('a compaction goes to the model in force', async () => {
    const [first, second] = [`anthropic:${fresh('fb-claude')}`, `openai:${fresh('fb-gpt')}`];
    script(first, { kind: 'status', status: 529 });
    script(second, { kind: 'text', text: 'one' }, { kind: 'text', text: 'two' });
    // A window the request passes at once: the second turn compacts the first before its step.
    const session = await start({ model: first, fallbacks: [second], fallbackReturnAfterMs: 600_000, contextWindow: 1_000 });
    expect(await sendAndWait(session, 'one')).toMatchObject({ status: 'completed' });
    expect(await sendAndWait(session, 'two')).toMatchObject({ status: 'completed' });
    expect((await readLog(session)).filter((e) => e.type === 'context/compacted')).toHaveLength(1);
    expect(requestsTo(second).map((r) => r.purpose)).toEqual(['step', 'compact', 'step']);
    expect(requestsTo(first)).toHaveLength(1);
  });
});

/**
 * The same promises end to end on the turnkey worker: `npm run worker` as a process, in the
 * environment a deployment gives it, with the session input's default retry policy, so
 * what ends the first model's ladder is the activity's early stop after fallbackAfterMs,
 * and the worker's own memory of a failing provider (activities/llm/provider-health.ts)
 * moves the next session on after its first failure. One process for the file's one test.
 */
describe('on a worker process', () => {
  const taskQueue = uniqueTaskQueue('fallback-process');
  let worker: WorkerProcess | undefined;
  beforeAll(async () => {
    worker = await startWorkerProcess('model-fallback', agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, llmUrl: h().llm.url }));
  });
  afterAll(async () => {
    await worker?.kill();
  });
  const startOnProcess = (input: Partial<SessionInput> & { model: string }) => startSession(h().client, { AGENT_TASK_QUEUE: taskQueue }, { idleTimeoutMs: 60_000, ...input });

  it("a provider down for fallbackAfterMs hands the step to the fallback, the next session's step moves on after its first failure, and the recovered provider gets the next turn", async () => {
    const [down, up] = [`anthropic:${fresh('fb-process-claude')}`, `openai:${fresh('fb-process-gpt')}`];
    const chain = { fallbacks: [up], fallbackAfterMs: 1_000 };
    script(down, { kind: 'status', status: 529 }, { kind: 'status', status: 529 });
    script(up, { kind: 'text', text: 'answered by the fallback' });
    const first = await startOnProcess({ model: down, ...chain });
    expect(await sendAndWait(first, 'hi')).toMatchObject({ status: 'completed' });
    // The first retry waits 0.5 to 1 s, within fallbackAfterMs; the second would end past it.
    expect(requestsTo(down).map((r) => r.replyKind)).toEqual(['status', 'status']);
    expect(switches(await readLog(first))).toEqual([{ turn: 1, step: 1, from: down, to: up, why: 'fallback', failure: 'overloaded' }]);

    // The worker knows the provider has been failing for over a second: one 529 is enough.
    script(down, { kind: 'status', status: 529 });
    script(up, { kind: 'text', text: 'answered by the fallback again' });
    const second = await startOnProcess({ model: down, ...chain });
    expect(await sendAndWait(second, 'hi')).toMatchObject({ status: 'completed' });
    expect(requestsTo(down)).toHaveLength(3);
    expect(switches(await readLog(second))).toEqual([{ turn: 1, step: 1, from: down, to: up, why: 'fallback', failure: 'overloaded' }]);

    script(down, { kind: 'text', text: 'recovered' });
    expect(await sendAndWait(first, 'again')).toMatchObject({ status: 'completed' });
    const log = await readLog(first);
    expect(stepModels(log)).toEqual([`1.1 ${down}`, `2.1 ${down}`]);
    expect(switches(log).at(-1)).toEqual({ turn: 2, step: 1, from: up, to: down, why: 'return', failure: undefined });
    expect(log.filter((e) => e.type === 'assistant').map((e) => e.type === 'assistant' && e.message.text)).toEqual(['answered by the fallback', 'recovered']);
    expect(requestsTo(up)).toHaveLength(2);
  });
});
