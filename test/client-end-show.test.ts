import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { explainError } from '../client/errors';
import { readLog, sendAndWait, startSession, type StartOptions } from '../client/sessions';
import { sendMessage } from '../client/turn-control';
import { stateQuery } from '../contracts/api';
import type { RunToolRequest, ToolOutcome } from '../contracts/tools/tool-outcome';
import type { agentSession } from '../workflows/session';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { barrier } from './support/barrier';
import { runEntry } from './support/cli';
import { runInProcess } from './support/cli-in-process';
import { eventually } from './support/eventually';
import { spawnEntry } from './support/spawn-cli';
import { useTempDir } from './support/temp-dir';

const TAG = Date.now();
let models = 0;
/** Models this file prices at $1 per million tokens, so a scripted call of 100k input tokens costs $0.10. */
const PRICED = Array.from({ length: 10 }, (_, i) => `end-show-${i}-${TAG}`);
const nextModel = () => PRICED[models++] ?? '';
const TENTH = { inputTokens: 100_000, outputTokens: 0 };

/** The call the turn that `end` waits for is held in, until the test lets it finish. */
const HELD = 'toolu_end_held';
const held = { started: barrier(), release: barrier() };
async function runTool(request: RunToolRequest): Promise<ToolOutcome> {
  if (request.callId === HELD) {
    held.started.open();
    await held.release.wait();
  }
  return { code: 'ok', content: `${request.name} done` };
}

const dir = useTempDir('end-show-');
const prices = () => path.join(dir(), 'prices.json');
beforeAll(async () => {
  await writeFile(prices(), JSON.stringify({ models: Object.fromEntries(PRICED.map((m) => [`anthropic:${m}`, { input: 1, output: 1 }])) }));
});
const h = useAgentHarness(() => ({ runTool, env: { AGENT_PRICES_FILE: prices() } }));

const env = () => clientEnvOf(h());
/** The CLI's process, as a user starts it: for a few command lines, so the process around them stays proven. */
const cliProcess = (...args: string[]) => runEntry('client/main.ts', args, env());
/** The same command line in this process (client/command-line.ts, as the CLI runs it): the rest, without a process start each. */
const cli = (...args: string[]) => runInProcess(args, env());
const handle = (id: string) => h().client.workflow.getHandle<typeof agentSession>(id);
const start = (model: string, options: Omit<StartOptions, 'model'> = {}) =>
  startSession(h().client, h().env, { model: `anthropic:${model}`, ...options });

const SpendSchema = z.strictObject({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadTokens: z.number(),
  cacheWriteTokens: z.number(),
  reasoningTokens: z.number(),
  costUsd: z.number().nullable(),
});

/** `end --json`: the session's result, named. */
const EndedSchema = z.strictObject({
  workflowId: z.string(),
  turns: z.number(),
  stepsTaken: z.number(),
  endedBy: z.enum(['request', 'idle_timeout']),
  usage: z.record(z.string(), z.number()),
  spend: SpendSchema,
});

/** `show --json` of a session whose state could be read. */
const ShownSchema = z.strictObject({
  workflowId: z.string(),
  runId: z.string(),
  status: z.string(),
  closedAt: z.iso.datetime().optional(),
  endedBy: z.enum(['request', 'idle_timeout']).optional(),
  model: z.string(),
  turn: z.number(),
  step: z.number(),
  phase: z.enum(['idle', 'llm', 'tools', 'approval']),
  queued: z.number(),
  stepsTaken: z.number(),
  retryPolicy: z.unknown(),
  settings: z.record(z.string(), z.unknown()),
  changedSettings: z.array(z.string()),
  spend: SpendSchema,
  budget: z.strictObject({ usd: z.number().optional(), tokens: z.number().optional(), warnAt: z.number().optional() }),
  pendingApprovals: z.array(z.strictObject({ turn: z.number(), step: z.number(), callId: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()), deadline: z.number() })),
});

describe('npm run client -- end', () => {
  it('ends an idle session: the workflow completes on request, and end prints one line of what it ran and spent, exit code 0', async () => {
    const model = nextModel();
    h().llm.script(model, { kind: 'text', text: 'hi', usage: TENTH });
    const session = await start(model);
    expect(await sendAndWait(session, 'hello')).toMatchObject({ status: 'completed' });

    const ended = await cliProcess('end', session.workflowId);
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stdout.trim().split('\n')).toEqual([`session ${session.workflowId} ended: 1 turn, 1 step, $0.1000`]);
    expect((await session.describe()).status.name).toBe('COMPLETED');
    expect(await session.result()).toMatchObject({ endedBy: 'request', turns: 1 });
  });

  it('--json prints the ended session\'s result', async () => {
    const session = await start(nextModel());
    const ended = await cli('end', session.workflowId, '--json');
    expect(ended.code, ended.stderr).toBe(0);
    expect(EndedSchema.parse(JSON.parse(ended.stdout))).toMatchObject({ workflowId: session.workflowId, turns: 0, stepsTaken: 0, endedBy: 'request', spend: { costUsd: 0 } });
  });

  it('while a turn runs, is accepted at once and refuses further messages, but waits for the turn to run to its end before the session ends', async () => {
    const model = nextModel();
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: HELD, name: 'calculator', input: { expression: '6*7' } }], usage: TENTH }, { kind: 'text', text: '42', usage: TENTH });
    const session = await start(model);
    const turn = await sendMessage(session, 'compute');
    await held.started.wait();

    const ending = spawnEntry('client/main.ts', ['end', session.workflowId], env());
    try {
      await ending.waitFor(new RegExp(`turn 1 of ${session.workflowId} is running: the session ends once it has ended \\(cancel ${session.workflowId} stops it now\\)`));
      // Asked through the library: `send` without --wait returns once its Update is answered, and a refusal is read only from the Update's result.
      const refusal: unknown = await sendAndWait(session, 'one more').then(() => undefined, (error: unknown) => error);
      expect(explainError(refusal, { namespace: 'default', address: '' }).message).toBe('the session refused: the session is ending and accepts no more messages');
      expect(ending.stdout()).toBe('');
      expect((await session.describe()).status.name).toBe('RUNNING');
    } finally {
      held.release.open();
    }
    expect(await ending.exited).toBe(0);
    expect(ending.stdout().trim()).toBe(`session ${session.workflowId} ended: 1 turn, 2 steps, $0.2000`);
    expect(await turn.outcome).toMatchObject({ status: 'completed', turn: 1 });
    expect((await readLog(session)).at(-1)).toMatchObject({ type: 'turn/end', status: 'completed' });
    expect(await session.result()).toMatchObject({ endedBy: 'request', turns: 1, stepsTaken: 2 });
  });

  it('refuses a session that has already ended in one line naming it, exit code 1', async () => {
    const session = await start(nextModel());
    expect((await cli('end', session.workflowId)).code).toBe(0);
    const again = await cli('end', session.workflowId);
    expect(again.code).toBe(1);
    expect(again.stderr.trim().split('\n')).toEqual([`client: session ${session.workflowId} has ended: it takes no more messages, decisions or policy changes`]);
  });
});

describe('npm run client -- show', () => {
  const WRITE = { id: 'toolu_show_write', name: 'write_file', input: { path: 'notes/plan.txt', content: 'ship it' } };

  async function waitingForApproval(): Promise<{ id: string; model: string }> {
    const model = nextModel();
    h().llm.script(model, { kind: 'tool_calls', calls: [WRITE], usage: TENTH }, { kind: 'text', text: 'written', usage: TENTH });
    const started = await cli('start', '--model', `anthropic:${model}`, '--approve-tools', 'write_file', '--budget-usd', '1', '--max-steps', '7', '--json');
    expect(started.code, started.stderr).toBe(0);
    const id = String(JSON.parse(started.stdout).workflowId);
    await sendMessage(handle(id), 'write the plan');
    await eventually('the write waits for approval', async () => ((await handle(id).query(stateQuery)).pendingApprovals.length > 0 ? true : undefined));
    return { id, model };
  }

  it('shows a running session in aligned lines: status, turn and step, model, the settings that differ from the defaults, spend against budget, and the call waiting for approval', async () => {
    const { id, model } = await waitingForApproval();
    const shown = await cliProcess('show', id);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout.trimEnd().split('\n')).toEqual([
      `session   ${id}`,
      'status    running · waiting for approval',
      'turn      1 · step 1/7 · 1 step in all',
      `model     anthropic:${model}`,
      'settings  maxSteps 7 · approvalRequired write_file',
      'spend     $0.1000 of $1.0000 · 100000 tokens (no token limit)',
      'approvals write_file #toolu_show_write (turn 1 · step 1)',
    ]);
    await handle(id).terminate('test cleanup');
  });

  it('--json prints the session as one object: its state, changed settings, spend, budget and pending approvals', async () => {
    const { id, model } = await waitingForApproval();
    const shown = await cli('show', id, '--json');
    expect(shown.code, shown.stderr).toBe(0);
    const view = ShownSchema.parse(JSON.parse(shown.stdout));
    expect(view).toMatchObject({
      workflowId: id,
      status: 'running',
      model: `anthropic:${model}`,
      turn: 1,
      step: 1,
      phase: 'approval',
      stepsTaken: 1,
      retryPolicy: 'default',
      settings: { maxSteps: 7, approvalRequired: ['write_file'], budgetUsd: 1 },
      changedSettings: ['maxSteps', 'approvalRequired'],
      spend: { inputTokens: 100_000, outputTokens: 0, costUsd: 0.1 },
      budget: { usd: 1 },
      pendingApprovals: [{ turn: 1, step: 1, callId: WRITE.id, name: 'write_file', input: WRITE.input }],
    });
    expect(view.closedAt).toBeUndefined();
    await handle(id).terminate('test cleanup');
  });

  it('shows a session that ended: how and when it closed, and what it ran, with no approvals waiting', async () => {
    const model = nextModel();
    h().llm.script(model, { kind: 'text', text: 'hi', usage: TENTH });
    const session = await start(model, { maxSteps: 9 });
    await sendAndWait(session, 'hello');
    expect((await cli('end', session.workflowId)).code).toBe(0);

    const shown = await cli('show', session.workflowId, '--json');
    expect(shown.code, shown.stderr).toBe(0);
    const closeTime = (await session.describe()).closeTime?.toISOString();
    expect(ShownSchema.parse(JSON.parse(shown.stdout))).toMatchObject({ status: 'ended', endedBy: 'request', closedAt: closeTime, turn: 1, changedSettings: ['maxSteps'], spend: { costUsd: 0.1 }, pendingApprovals: [] });
    const human = await cli('show', session.workflowId);
    expect(human.stdout.split('\n')[1]).toBe(`status    ended (on request) at ${closeTime}`);
  });

  it('shows what Temporal kept of a closed session no worker can replay, and says so', async () => {
    // A task queue no worker polls: the session never ran, and nothing can answer its Query.
    const orphan = await startSession(h().client, { AGENT_TASK_QUEUE: `nobody-${TAG}` }, { model: 'anthropic:orphan' });
    await orphan.terminate('test: closed unread');
    const shown = await cli('show', orphan.workflowId, '--json');
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ workflowId: orphan.workflowId, status: 'terminated', closedAt: expect.any(String), pendingApprovals: [], unavailable: expect.stringMatching(/^its state could not be read \(.+\); shown from Temporal's record of it$/) });
  });

  it.each([['show'], ['end']])('%s of an unknown id is one line naming it, exit code 1', async (command) => {
    const id = `no-such-session-${TAG}`;
    const result = await cli(command, id);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toEqual([`client: no session "${id}" in namespace "${h().env.TEMPORAL_NAMESPACE}"`]);
  });
});
