import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { endSession, readLog, sendAndWait, startSession } from '../client/sessions';
import { workflowBundle } from '../harness/local-agent';
import { awaitTurnUpdate, setBudgetUpdate, setRetryPolicyUpdate, stateQuery } from '../contracts/api';
import type { agentSession } from '../workflows/session';
import type { SessionEvent } from '../contracts/session-log';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { useTempDir } from './support/temp-dir';
import { runEntry } from './support/cli';
import { runInProcess } from './support/cli-in-process';

const h = useAgentHarness();
const dir = useTempDir('client-session-');

const UI = 'http://ui.example:8233';
const env = () => ({ ...clientEnvOf(h()), TEMPORAL_UI_URL: UI });
/** The CLI's process, as a user starts it: for a few command lines, so the process around them stays proven. */
const cliProcess = (...args: string[]) => runEntry('client/main.ts', args, env());
/** The same command line in this process (client/command-line.ts, as the CLI runs it): the rest, without a process start each. */
const cli = (...args: string[]) => runInProcess(args, env());
const json = <T = Record<string, unknown>>(stdout: string) => JSON.parse(stdout) as T;
const handle = (id: string) => h().client.workflow.getHandle<typeof agentSession>(id);

let models = 0;
const newModel = (name: string) => `session-${name}-${++models}-${Date.now()}`;

describe('npm run client -- start', () => {
  it('creates a session that waits for messages, and prints its id and its Temporal UI link', async () => {
    const result = await cliProcess('start', '--model', `anthropic:echo-${newModel('start')}`);
    expect(result.code, result.stderr).toBe(0);
    const id = /^session (session-\S+)$/m.exec(result.stdout)?.[1] ?? '';
    expect(result.stdout).toMatch(new RegExp(`^UI ${UI}/namespaces/default/workflows/${id}/[0-9a-f-]+/history$`, 'm'));
    expect(result.stdout).toContain(`npm run client -- send ${id} "your message" --wait`);
    expect(await handle(id).query(stateQuery)).toMatchObject({ status: 'idle', turn: 0 });
    await handle(id).terminate('test cleanup');
  });

  it('takes --id, --system and --model, and --json prints {workflowId, runId, ui}', async () => {
    const model = `openai:echo-${newModel('json')}`;
    const id = `session-custom-${Date.now()}`;
    const result = await cli('start', '--id', id, '--model', model, '--system', 'Be brief.', '--json');
    expect(result.code, result.stderr).toBe(0);
    const out = json(result.stdout);
    expect(Object.keys(out).sort()).toEqual(['runId', 'ui', 'workflowId']);
    expect(out).toMatchObject({ workflowId: id, ui: `${UI}/namespaces/default/workflows/${id}/${String(out.runId)}/history` });
    expect(await handle(id).query(stateQuery)).toMatchObject({ model, system: 'Be brief.' });

    const again = await cli('start', '--id', id, '--model', model);
    expect(again.code).toBe(1);
    expect(again.stderr.trim().split('\n')).toEqual([`client: a session with id "${id}" already exists; pick another --id`]);
    await handle(id).terminate('test cleanup');
  });
});

describe('npm run client -- start --prompt', () => {
  it('sends the first message with the start and returns once the session has accepted it; the turn runs on', async () => {
    const model = `anthropic:echo-${newModel('start-prompt')}`;
    const result = await cli('start', '--model', model, '--prompt', 'hello at once', '--json');
    expect(result.code, result.stderr).toBe(0);
    const out = json<{ workflowId: string; updateId: string }>(result.stdout);
    expect(out.updateId).toEqual(expect.any(String));
    const outcome = await handle(out.workflowId).executeUpdate(awaitTurnUpdate, { args: [{ turn: 1 }] });
    expect(outcome).toMatchObject({ turn: 1, status: 'completed' });
    expect((await readLog(handle(out.workflowId))).find((e) => e.type === 'turn/start')).toMatchObject({ text: 'hello at once' });
    const { events } = await handle(out.workflowId).fetchHistory();
    const accepted = (events ?? []).findIndex((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    expect((events ?? []).slice(0, accepted).filter((e) => e.workflowTaskCompletedEventAttributes)).toHaveLength(1);
    await endSession(handle(out.workflowId));
  });

  it('refuses an empty prompt in one line, before starting anything', async () => {
    const result = await cli('start', '--model', 'anthropic:echo-never', '--prompt', '  ');
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual(['client: a message must not be empty']);
  });
});

describe('output', () => {
  it('has no colour codes when stdout is not a terminal, even without NO_COLOR', async () => {
    const session = await startSession(h().client, h().env, { model: `anthropic:echo-${newModel('colour')}` });
    const result = await runEntry('client/main.ts', ['send', session.workflowId, 'hi', '--wait'], { ...env(), NO_COLOR: '' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('turn 1 · you: hi');
    expect(result.stdout + result.stderr).not.toContain('\u001b[');
    await session.terminate('test cleanup');
  });
});

describe('npm run client -- send', () => {
  it('returns once the session has accepted the message; the turn runs on without the client', async () => {
    const model = newModel('send');
    h().llm.script(model, { kind: 'text', text: 'Slow answer.', delayMs: 1_500 });
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}` });
    const result = await cli('send', session.workflowId, 'take your time', '--json');
    expect(result.code, result.stderr).toBe(0);
    expect(json(result.stdout)).toEqual({ workflowId: session.workflowId, updateId: expect.any(String) });
    expect(await session.executeUpdate(awaitTurnUpdate, { args: [{ turn: 1 }] })).toMatchObject({ status: 'completed' });
    await session.terminate('test cleanup');
  });

  it('with --wait follows the turn live and prints the reply, a tool call and its result', async () => {
    const model = newModel('wait');
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ id: 'toolu_send_1', name: 'calculator', input: { expression: '6*7' } }] },
      { kind: 'text', text: 'It is 42.' },
    );
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}` });
    const result = await cliProcess('send', session.workflowId, 'what is 6*7?', '--wait');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([
      'turn 1 · you: what is 6*7?',
      `turn 1 · step 1 · llm anthropic:${model}`,
      'turn 1 · step 1 · → calculator {"expression":"6*7"} #toolu_send_1',
      'turn 1 · step 1 · ✓ calculator: 42 #toolu_send_1',
      `turn 1 · step 2 · llm anthropic:${model}`,
      'turn 1 · step 2 · assistant: It is 42.',
      'turn 1 completed',
    ]);
    await session.terminate('test cleanup');
  });

  it('with --wait --json prints the outcome and the messages of this turn only; a failed turn is status failed with its type, exit code 0', async () => {
    const model = newModel('wait-json');
    h().llm.script(model, { kind: 'text', text: 'First.' }, { kind: 'status', status: 401 });
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}` });
    await sendAndWait(session, 'one');
    const result = await cli('send', session.workflowId, 'two', '--wait', '--json');
    expect(result.code, result.stderr).toBe(0);
    const out = json(result.stdout);
    expect(out).toEqual({
      workflowId: session.workflowId,
      turn: 2,
      status: 'failed',
      failure: { type: 'auth_error', message: expect.stringContaining('401') },
      messages: [{ role: 'user', text: 'two' }],
    });
    await session.terminate('test cleanup');
  });
});

describe('npm run client -- log', () => {
  it('prints every event with the seq that fork --at takes; --json prints the events exactly as the session keeps them', async () => {
    const model = newModel('log');
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_log_1', name: 'calculator', input: { expression: '1+2' } }] }, { kind: 'text', text: 'Three.' });
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}` });
    await sendAndWait(session, 'add');
    const events = await readLog(session);

    const human = await cli('log', session.workflowId);
    expect(human.code, human.stderr).toBe(0);
    const lines = human.stdout.trim().split('\n');
    expect(lines).toHaveLength(events.length);
    expect(lines.map((l) => Number(l.trim().split(/\s+/)[0]))).toEqual(events.map((e) => e.seq));
    expect(lines[0]).toBe('0  turn 1 · you: add');
    expect(lines).toContain('3  turn 1 · step 1 · → calculator {"expression":"1+2"} #toolu_log_1');
    expect(lines).toContain('5  turn 1 · step 1 completed');
    // Each step's answer carries that step's usage.
    expect(lines).toContainEqual(expect.stringMatching(/^7 {2}turn 1 · step 2 · assistant: Three\. · tokens in \d+ · out \d+ · cost unknown$/));

    const machine = await cli('log', session.workflowId, '--json');
    expect(json<SessionEvent[]>(machine.stdout)).toEqual(events);
    await session.terminate('test cleanup');
  });
});

describe('npm run client -- history', () => {
  it('writes the event history as JSON that Worker.runReplayHistory replays without a determinism error', async () => {
    const model = newModel('history');
    h().llm.script(model, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '2*21' } }] }, { kind: 'text', text: '42' });
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}` });
    await sendAndWait(session, 'compute');
    await endSession(session);
    await session.result();

    const file = path.join(dir(), 'incident.json');
    const result = await cli('history', session.workflowId, '--out', file);
    expect(result.code, result.stderr).toBe(0);
    const history = JSON.parse(await readFile(file, 'utf8')) as { events: { eventType: string }[] };
    expect(result.stdout).toContain(`wrote ${history.events.length} events of ${session.workflowId} (run ${session.firstExecutionRunId}) to ${file}`);
    expect(history.events[0]?.eventType).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_STARTED');
    expect(history.events.at(-1)?.eventType).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
    // Exactly what docs/cli.md tells a user to do with the file.
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, session.workflowId);
  });

  it('needs --out, and says so in one line with exit code 2', async () => {
    const result = await cli('history', 'session-x');
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual(['client: history needs --out FILE']);
  });

  it('takes --run RUNID or --all, not both, and says so in one line with exit code 2', async () => {
    const result = await cli('history', 'session-x', '--out', path.join(dir(), 'never.json'), '--run', 'some-run', '--all');
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual(['client: history takes --run RUNID or --all, not both']);
  });

  it('writes the run --run names: the first run of a session that continued as new, which names no run before it', async () => {
    const session = await startSession(h().client, h().env, { model: `anthropic:echo-${newModel('history-run')}`, continueAsNewAfterEvents: 20, idleTimeoutMs: 120_000 });
    for (const text of ['one', 'two', 'three']) await sendAndWait(session, text);
    const latest = await handle(session.workflowId).describe();
    expect(latest.runId).not.toBe(session.firstExecutionRunId);

    const first = json(await cli('history', session.workflowId, '--out', path.join(dir(), 'first.json'), '--run', session.firstExecutionRunId, '--json').then((r) => r.stdout));
    expect(first).toMatchObject({ workflowId: session.workflowId, runId: session.firstExecutionRunId });
    expect(first).not.toHaveProperty('continuedFromRunId');
    const human = await cli('history', session.workflowId, '--out', path.join(dir(), 'latest.json'));
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(`(run ${latest.runId})`);
    expect(human.stdout).toMatch(/it continued as new from run \S+: history \S+ --run \S+ --out FILE, or --all for every run/);
    await session.terminate('test cleanup');
  });
});

describe('npm run client -- fork', () => {
  it('starts a new session from the log up to --at EVENT; a cut inside a step gets its tool calls answered, and the fork takes messages', async () => {
    const model = newModel('fork');
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_fork_1', name: 'calculator', input: { expression: '5*5' } }] }, { kind: 'text', text: '25' });
    const source = await startSession(h().client, h().env, { model: `anthropic:${model}` });
    await sendAndWait(source, 'square 5');
    const cut = (await readLog(source)).find((e) => e.type === 'tool/call')?.seq ?? -1;

    const result = await cli('fork', source.workflowId, '--at', String(cut), '--json');
    expect(result.code, result.stderr).toBe(0);
    const out = json(result.stdout);
    expect(out).toMatchObject({ workflowId: expect.stringMatching(/^session-/), forkedFrom: { workflowId: source.workflowId, atSeq: cut } });
    const fork = handle(String(out.workflowId));
    expect(await fork.query(stateQuery)).toMatchObject({ forkedFrom: { workflowId: source.workflowId, atSeq: cut }, model: `anthropic:${model}` });
    const forked = await readLog(fork);
    expect(forked.slice(0, cut + 1).map((e) => e.type)).toEqual((await readLog(source)).slice(0, cut + 1).map((e) => e.type));
    expect(forked.find((e) => e.type === 'tool/result')).toMatchObject({ callId: 'toolu_fork_1', code: 'TOOL_OUTCOME_UNKNOWN' });

    h().llm.script(model, { kind: 'text', text: 'Resumed.' });
    expect(await sendAndWait(fork, 'go on')).toMatchObject({ status: 'completed' });
    // The source is left as it was.
    expect((await readLog(source)).filter((e) => e.type === 'turn/start')).toHaveLength(1);
    await Promise.all([source.terminate('test cleanup'), fork.terminate('test cleanup')]);
  });

  it('runs the fork with the settings of its source as they are now: limits, tools, approvals, and the retry policy and budget set live', async () => {
    const model = newModel('fork-settings');
    const source = await startSession(h().client, h().env, {
      model: `anthropic:echo-${model}`,
      maxSteps: 7,
      maxTokens: 1234,
      tools: ['calculator', 'write_file'],
      toolTimeouts: { write_file: 5_000 },
      approvalRequired: ['write_file'],
      reasoning: 'low',
      promptCache: false,
      budgetUsd: 3,
    });
    await sendAndWait(source, 'hi');
    await source.executeUpdate(setRetryPolicyUpdate, { args: [null] });
    await source.executeUpdate(setBudgetUpdate, { args: [{ usd: 5, tokens: 90_000 }] });

    const result = await cli('fork', source.workflowId, '--json');
    expect(result.code, result.stderr).toBe(0);
    const fork = handle(String(json(result.stdout).workflowId));
    const [from, to] = await Promise.all([source.query(stateQuery), fork.query(stateQuery)]);
    expect(to.settings).toEqual({ ...from.settings, budgetUsd: 5, budgetTokens: 90_000 });
    expect(to.settings).toMatchObject({ maxSteps: 7, maxTokens: 1234, tools: ['calculator', 'write_file'], toolTimeouts: { write_file: 5_000 }, approvalRequired: ['write_file'], reasoning: 'low', promptCache: false });
    expect(to.retryPolicy).toBeNull();
    expect(to.budget).toEqual({ usd: 5, tokens: 90_000 });
    await Promise.all([source.terminate('test cleanup'), fork.terminate('test cleanup')]);
  });

  it('refuses an --at past the end of the log in one line naming its last event, exit code 2', async () => {
    const session = await startSession(h().client, h().env, { model: `anthropic:echo-${newModel('fork-bad')}` });
    await sendAndWait(session, 'hi');
    const result = await cli('fork', session.workflowId, '--at', '999');
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^client: --at 999 is past the end of the source log \(its last event is \d+\)$/)]);
    await session.terminate('test cleanup');
  });
});
