import { describe, expect, it } from 'vitest';
// The client as a library: the same functions the CLI runs, from client/index.ts.
import { endSession, sendMessage, startSession, watchSession, type SessionHandle, type WatchItem } from '../client';
import { stateQuery } from '../contracts/api';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';
import { spawnEntry } from './support/spawn-cli';

const h = useAgentHarness();

const env = () => clientEnvOf(h());
const watch = (...args: string[]) => spawnEntry('client/main.ts', ['watch', ...args], env());

let models = 0;
const newModel = (name: string) => `watch-${name}-${++models}-${Date.now()}`;
const start = (model: string) => startSession(h().client, h().env, { model: `anthropic:${model}`, idleTimeoutMs: 120_000 });

/** About six seconds of streaming: long enough for a few heartbeats (the worker sends one every 2 s at most). */
const SLOW_ANSWER = { kind: 'text', text: 'The answer is 42, and here is why it is 42 in some detail.', chunkSize: 4, chunkDelayMs: 400 } as const;

describe('npm run client -- watch', () => {
  it('follows a turn live: the step, a retry with its countdown, streamed text, tool calls running and done; --until-idle ends it when the turn is over', async () => {
    const model = newModel('live');
    h().llm.script(
      model,
      // Held, so the watch is certainly following before anything happens.
      { kind: 'status', status: 529, headers: { 'retry-after': '3' }, hold: true },
      { kind: 'tool_calls', calls: [{ id: 'toolu_watch_1', name: 'calculator', input: { expression: '6*7' } }] },
      SLOW_ANSWER,
    );
    const session = await start(model);
    await sendMessage(session, 'what is 6*7?');
    const w = watch(session.workflowId, '--until-idle');
    try {
      await w.waitFor(/turn 1 · step 1\/50 · llm anthropic:\S+ · running/);
      expect(h().llm.release(model)).toBe(1);
      await w.waitFor(/turn 1 · step 1\/50 · llm anthropic:\S+ · retrying in [1-3] s \(attempt 2\/11\): overloaded/);
      await w.waitFor(/streaming \(\d+ chars\) …/, 30_000);
      expect(await w.exited).toBe(0);
    } finally {
      w.kill();
    }
    const out = w.stdout();
    expect(out).toContain('turn 1 · you: what is 6*7?');
    expect(out).toContain('turn 1 · step 1 · → calculator {"expression":"6*7"} #toolu_watch_1');
    expect(out).toContain('turn 1 · step 1 · ✓ calculator: 42 #toolu_watch_1');
    expect(out).toContain(`turn 1 · step 2 · assistant: ${SLOW_ANSWER.text}`);
    expect(out).toMatch(/turn 1 completed\n$/);
    // Progress is commentary on stderr; stdout is the conversation alone.
    expect(out).not.toMatch(/retrying|streaming/);
    expect(w.stderr()).toContain(`session ${session.workflowId} is idle`);
    await session.terminate('test cleanup');
  });

  it('reads the state and log only when the history has grown: a round while the LLM call streams reads the description alone, which is not billed', async () => {
    const model = newModel('queries');
    // About four seconds of streaming, polled every 100 ms.
    h().llm.script(model, { kind: 'text', text: 'word '.repeat(40), chunkSize: 5, chunkDelayMs: 100 });
    const session = await start(model);
    let queries = 0;
    let rounds = 0;
    const lengths = new Set<string>();
    const counted = new Proxy(session, {
      get(target, prop, receiver) {
        if (prop === 'query') return (...args: Parameters<SessionHandle['query']>) => (queries++, target.query(...args));
        if (prop === 'describe')
          return async () => {
            rounds++;
            const description = await target.describe();
            lengths.add(`${description.runId}/${description.historyLength}`);
            return description;
          };
        return Reflect.get(target, prop, receiver);
      },
    });
    await sendMessage(session, 'take your time');
    const items: WatchItem[] = [];
    await watchSession(h().client, counted, { untilIdle: true, intervalMs: 100, onItem: (item) => items.push(item) });
    expect(items.some((item) => item.type === 'progress' && item.lines.some((line) => /streaming \(\d+ chars\)/.test(line)))).toBe(true);
    expect(items.some((item) => item.type === 'event' && item.event.type === 'assistant')).toBe(true);
    // Polled every 100 ms, not faster: about 40 rounds.
    expect(rounds).toBeLessThan(120);
    // Many rounds more than the history grew. Each growth costs a state Query, the log's pages
    // to an empty one, and the step's context once; the first round also finds the turn's
    // start, and the last reads the log once more.
    expect(rounds).toBeGreaterThan(6 * lengths.size);
    expect(queries).toBeLessThanOrEqual(5 * lengths.size + 2);
    await session.terminate('test cleanup');
  });

  it('opens with the turn in progress, not the whole past', async () => {
    const model = newModel('latest');
    const session = await start(`echo-${model}`);
    const first = await sendMessage(session, 'first message');
    await first.outcome;
    await sendMessage(session, 'second message');
    const result = await runEntry('client/main.ts', ['watch', session.workflowId, '--until-idle'], env());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('turn 2 · you: second message');
    expect(result.stdout).not.toContain('first message');
    await session.terminate('test cleanup');
  });

  it('ends by itself, exit code 0, when the session ends', async () => {
    const model = newModel('ends');
    const session = await start(`echo-${model}`);
    const w = watch(session.workflowId);
    try {
      await w.waitFor(/session idle/);
      await endSession(session);
      expect(await w.exited).toBe(0);
      expect(w.stderr()).toContain(`session ${session.workflowId} has ended (completed)`);
    } finally {
      w.kill();
    }
  });

  it('stops on Ctrl-C with exit code 130 and leaves the session running', async () => {
    const model = newModel('interrupt');
    const session = await start(`echo-${model}`);
    const w = watch(session.workflowId);
    try {
      await w.waitFor(/session idle/);
      w.kill('SIGINT');
      expect(await w.exited).toBe(130);
      expect(w.stderr()).toContain(`stopped watching; the session goes on: npm run client -- watch ${session.workflowId}`);
    } finally {
      w.kill();
    }
    expect((await session.describe()).status.name).toBe('RUNNING');
    expect((await session.query(stateQuery)).status).toBe('idle');
    await session.terminate('test cleanup');
  });

  it('with --json prints one object per line: the log events, progress with the pending activities, and how it ended', async () => {
    const model = newModel('json');
    h().llm.script(model, { kind: 'text', text: 'hello', hold: true });
    const session = await start(model);
    await sendMessage(session, 'hi');
    const w = watch(session.workflowId, '--until-idle', '--json');
    try {
      await w.waitFor(/"activityType":"callLlm"/);
      h().llm.release(model);
      expect(await w.exited).toBe(0);
    } finally {
      w.kill();
    }
    const items = w
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as WatchItem);
    const events = items.flatMap((i) => (i.type === 'event' ? [i.event.type] : []));
    expect(events).toEqual(['turn/start', 'step/start', 'assistant', 'step/end', 'turn/end']);
    expect(items.filter((i) => i.type === 'progress').length).toBeGreaterThanOrEqual(2);
    const running = items.find((i) => i.type === 'progress' && i.activities.length > 0);
    expect(running).toMatchObject({ type: 'progress', turn: 1, step: 1, phase: 'llm', activities: [{ activityType: 'callLlm', attempt: 1, state: 'started' }] });
    expect(items.at(-1)).toEqual({ type: 'end', reason: 'idle', executionStatus: 'RUNNING' });
    await session.terminate('test cleanup');
  });

  it("says once that a session whose model's window is unknown does not compact, and says nothing of a session with a window", async () => {
    const unknown = await start(`echo-${newModel('no-window')}`);
    await (await sendMessage(unknown, 'hi')).outcome;
    const told = await runEntry('client/main.ts', ['watch', unknown.workflowId, '--until-idle'], env());
    expect(told.code, told.stderr).toBe(0);
    const notice = 'context window unknown for ';
    expect(told.stderr.split('\n').filter((line) => line.startsWith(notice))).toEqual([expect.stringMatching(/^context window unknown for anthropic:echo-watch-no-window-\S+: no compaction \(set --context-window N\)$/)]);
    const asJson = await runEntry('client/main.ts', ['watch', unknown.workflowId, '--until-idle', '--json'], env());
    expect(asJson.stdout.trim().split('\n').map((line) => JSON.parse(line) as WatchItem).find((i) => i.type === 'progress')).toMatchObject({ contextWindow: null, model: expect.stringMatching(/^anthropic:echo-/) });

    const known = await startSession(h().client, h().env, { model: `anthropic:echo-${newModel('window')}`, contextWindow: 50_000, idleTimeoutMs: 120_000 });
    const quiet = await runEntry('client/main.ts', ['watch', known.workflowId, '--until-idle'], env());
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toContain('context window unknown');
    await Promise.all([unknown.terminate('test cleanup'), known.terminate('test cleanup')]);
  });

  it('says in one line, exit code 1, that a session id is unknown', async () => {
    const result = await runEntry('client/main.ts', ['watch', 'session-that-never-was'], env());
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual(['client: no session "session-that-never-was" in namespace "default"']);
  });
});
