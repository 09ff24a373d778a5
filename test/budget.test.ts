import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sendAndWait, readLog } from '../client/sessions';
import { stateQuery } from '../contracts/api';
import type { agentSession } from '../workflows/session';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';
import { runInProcess } from './support/cli-in-process';
import { useTempDir } from './support/temp-dir';
import { timerSummaries } from './support/timer-summaries';
import { eventually } from './support/eventually';

const TAG = Date.now();
let models = 0;
/** Models this file prices at $1 per million tokens, so a scripted call of 100k input tokens costs $0.10. */
const PRICED = Array.from({ length: 8 }, (_, i) => `budget-${i}-${TAG}`);
const nextModel = () => PRICED[models++] ?? '';

const dir = useTempDir('budget-');
const prices = () => path.join(dir(), 'prices.json');
beforeAll(async () => {
  await writeFile(prices(), JSON.stringify({ models: Object.fromEntries(PRICED.map((m) => [`anthropic:${m}`, { input: 1, output: 1 }])) }));
});
const h = useAgentHarness(() => ({ env: { AGENT_PRICES_FILE: prices() } }));

/** The CLI's process, as a user starts it: for a few command lines, so the process around them stays proven. */
const cliProcess = (...args: string[]) => runEntry('client/main.ts', args, clientEnvOf(h()));
/** The same command line in this process (client/command-line.ts, as the CLI runs it): the rest, without a process start each. */
const cli = (...args: string[]) => runInProcess(args, clientEnvOf(h()));
const handle = (id: string) => h().client.workflow.getHandle<typeof agentSession>(id);

const TENTH = { inputTokens: 100_000, outputTokens: 0 };
/** `steps` calculator steps of $0.10 each, then an answer of $0.10. */
function scriptLoop(model: string, steps: number): void {
  const calls = Array.from({ length: steps }, (_, i) => ({ kind: 'tool_calls' as const, calls: [{ name: 'calculator', input: { expression: `${i}+1` } }], usage: TENTH }));
  h().llm.script(model, ...calls, { kind: 'text', text: 'done', usage: TENTH });
}

async function start(model: string, ...flags: string[]): Promise<string> {
  const started = await cli('start', '--model', `anthropic:${model}`, '--json', ...flags);
  expect(started.code, started.stderr).toBe(0);
  return String(JSON.parse(started.stdout).workflowId);
}

describe('--budget-usd', () => {
  it('stops a looping turn before the call it cannot afford: exactly the requests $0.25 allows, the paid step’s tools still run, and the session goes on once the budget is raised', async () => {
    const model = nextModel();
    scriptLoop(model, 3);
    const id = await start(model, '--budget-usd', '0.25');
    const turn = await sendAndWait(handle(id), 'count');
    // $0, $0.10 and $0.20 spent before calls 1 to 3: each is made; $0.30 before the 4th: refused.
    expect(h().llm.requests({ model })).toHaveLength(3);
    expect(turn).toMatchObject({ status: 'failed', failure: { type: 'budget_exceeded' } });
    expect(turn.failure?.message).toMatch(/the session spent \$0\.3000 of its \$0\.2500 budget/);
    const log = await readLog(handle(id));
    expect(log.filter((e) => e.type === 'tool/result' && e.step === 3).map((e) => e.type === 'tool/result' && e.code)).toEqual(['ok']);
    expect(log.filter((e) => e.type === 'step/end').at(-1)).toMatchObject({ step: 4, status: 'failed', failure: { type: 'budget_exceeded' } });
    // The same status as the AgentStatus search attribute: idle, its last turn failed.
    expect((await handle(id).query(stateQuery)).status).toBe('failed');

    const raised = await cliProcess('budget', id, '--usd', '1');
    expect(raised.code, raised.stderr).toBe(0);
    expect(raised.stdout.trim()).toBe(`budget of ${id}: $0.3000 of $1.0000 · 300000 tokens (no token limit)`);
    expect(await sendAndWait(handle(id), 'go on')).toMatchObject({ status: 'completed' });
    expect((await handle(id).query(stateQuery)).status).toBe('idle');
    expect(h().llm.requests({ model })).toHaveLength(4);
    await handle(id).terminate('test cleanup');
  });
});

describe('a budget across continue-as-new', () => {
  it('keeps the budget set live and the spend so far in the next run, and keeps refusing there', async () => {
    const model = nextModel();
    const step = { kind: 'tool_calls' as const, calls: [{ name: 'calculator', input: { expression: '1+1' } }], usage: TENTH };
    // The first reply is slow, so the budget is changed while the first run is still in its turn.
    h().llm.script(model, { ...step, delayMs: 1_500 }, step, step, { kind: 'text', text: 'done', usage: TENTH });
    const id = await start(model, '--budget-usd', '5', '--continue-as-new-after', '20');
    const turn = sendAndWait(handle(id), 'count');
    const lowered = await cli('budget', id, '--usd', '0.35', '--json');
    expect(lowered.code, lowered.stderr).toBe(0);
    expect(JSON.parse(lowered.stdout)).toMatchObject({ budget: { usd: 0.35 } });
    // $0.30 before the 4th call: still under $0.35, so the turn ends with its answer.
    expect(await turn).toMatchObject({ status: 'completed' });
    const state = await eventually('the next run', async () => {
      const s = await handle(id).query(stateQuery);
      return s.runs === 2 ? s : undefined;
    });
    expect(state.budget).toEqual({ usd: 0.35 });
    expect(state.spend.costUsd).toBeCloseTo(0.4, 10);
    expect(await sendAndWait(handle(id), 'more')).toMatchObject({ status: 'failed', failure: { type: 'budget_exceeded' } });
    expect(h().llm.requests({ model })).toHaveLength(4);
    await handle(id).terminate('test cleanup');
  });
});

describe('--budget-tokens', () => {
  it('refuses the call after 250k tokens are spent, in run --json as a failed turn of type budget_exceeded', async () => {
    const model = nextModel();
    scriptLoop(model, 5);
    const result = await cli('run', '--json', '--prompt', 'count', '--model', `anthropic:${model}`, '--budget-tokens', '250000');
    expect(result.code, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out).toMatchObject({ status: 'failed', failure: { type: 'budget_exceeded' }, settings: { budgetTokens: 250_000 } });
    expect(out.failure.message).toMatch(/the session spent 300000 tokens of its 250000 tokens budget/);
    expect(h().llm.requests({ model })).toHaveLength(3);
  });
});

describe('--budget-warn', () => {
  it('pauses the turn at 20 % of the budget on a durable timer named for it, and goes on when a human approves', async () => {
    const model = nextModel();
    scriptLoop(model, 3);
    const id = await start(model, '--budget-usd', '1', '--budget-warn', '0.2');
    const turn = sendAndWait(handle(id), 'count');
    const pending = await eventually('the budget pause', async () => (await handle(id).query(stateQuery)).pendingApprovals.find((p) => p.callId === 'budget'));
    expect(pending).toMatchObject({ name: 'budget', input: { usd: 1, warnAt: 0.2 } });
    expect(h().llm.requests({ model })).toHaveLength(2);
    expect(await timerSummaries(handle(id))).toContain('budget 20 % · approval');

    const approved = await cli('approve', id, 'budget');
    expect(approved.code, approved.stderr).toBe(0);
    expect(await turn).toMatchObject({ status: 'completed' });
    expect(h().llm.requests({ model })).toHaveLength(4);
    await handle(id).terminate('test cleanup');
  });

  it('fails the turn budget_exceeded when a human denies going on', async () => {
    const model = nextModel();
    scriptLoop(model, 3);
    const id = await start(model, '--budget-usd', '1', '--budget-warn', '0.2');
    const turn = sendAndWait(handle(id), 'count');
    await eventually('the budget pause', async () => (await handle(id).query(stateQuery)).pendingApprovals.find((p) => p.callId === 'budget'));
    const denied = await cli('deny', id, 'budget', '--reason', 'too dear');
    expect(denied.code, denied.stderr).toBe(0);
    const outcome = await turn;
    expect(outcome).toMatchObject({ status: 'failed', failure: { type: 'budget_exceeded' } });
    expect(outcome.failure?.message).toMatch(/reached 20 % of its budget and a human denied it: too dear/);
    expect(h().llm.requests({ model })).toHaveLength(2);
    await handle(id).terminate('test cleanup');
  });
});

describe('budget refusals', () => {
  it.each([
    [['start', '--budget-usd', '0'], 'client: --budget-usd must be more than 0 USD, got "0"'],
    [['start', '--budget-tokens', '1.5'], 'client: --budget-tokens must be a whole number of tokens, got "1.5"'],
    [['start', '--budget-warn', '1'], 'client: --budget-warn must be less than 1, got "1"'],
    [['budget', 'some-session', '--warn', 'lots'], 'client: --warn must be a fraction between 0 and 1 (or none), got "lots"'],
  ])('%j is refused in one line, exit 2, before the server is asked', async (args, line) => {
    const result = await cli(...args);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(line);
  });
});
