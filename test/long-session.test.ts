/**
 * A long session against a small context window: 60 turns, each reading a 2 KiB file and
 * answering, with a scripted LLM that refuses any request above 8 000 tokens or with a tool
 * call split from its result. The session must compact at the right points, never send
 * what the provider would refuse, continue as new several times, and still give the whole
 * log, a fork of its first run that goes on, and histories that replay.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { endSession, sendAndWait, startSession } from '../client/sessions';
import { retryQueryTimeouts } from '../client/query-timeout-retry';
import { workflowBundle } from '../harness/local-agent';
import type { RecordedRequest } from '../testing/scripted-llm/server';
import { stateQuery, type SessionState } from '../contracts/api';
import type { agentSession } from '../workflows/session';
import type { SessionEvent } from '../contracts/session-log';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';
import { runInProcess } from './support/cli-in-process';
import { unpairedToolCalls } from './support/pairing';
import { useTempDir } from './support/temp-dir';

const TURNS = 60;
const WINDOW = 8_000;
const COMPACT_AT = 0.75;
/** About 35 history events make a turn: a run holds a few turns, so 60 turns take many runs. */
const CONTINUE_AS_NEW_AFTER_EVENTS = 200;
const FILE_BYTES = 2 * 1024;

const workspace = useTempDir('long-session-');
const h = useAgentHarness(() => ({ env: { AGENT_WORKSPACE: workspace() } }));
/** The CLI's process, as a user starts it: for the first command line here, so the process around it stays proven. */
const cliProcess = (...args: string[]) => runEntry('client/main.ts', args, clientEnvOf(h()));
/** The same command line in this process (client/command-line.ts, as the CLI runs it): the rest, without a process start each. */
const cli = (...args: string[]) => runInProcess(args, clientEnvOf(h()));
const handle = (id: string, runId?: string) => h().client.workflow.getHandle<typeof agentSession>(id, runId);

const message = (turn: number) => `please read notes-${turn}.txt`;
const fileName = (turn: number) => `notes-${turn}.txt`;
/** A line only file `turn` holds, so a request shows whose content it carries. */
const marker = (turn: number) => `marker of file ${turn}:`;
const answer = (turn: number) => `File ${turn} is read.`;

/** 2 KiB of text, starting with the file's marker. */
function fileText(turn: number): string {
  const line = `${marker(turn)} ${'lorem ipsum dolor sit amet '.repeat(3)}\n`;
  return line.repeat(Math.ceil(FILE_BYTES / line.length)).slice(0, FILE_BYTES);
}

interface LongSession {
  model: string;
  workflowId: string;
  firstRunId: string;
  /** Every event, read once through the client CLI (`log --json`). */
  log: SessionEvent[];
  state: SessionState;
  /** Every request the scripted LLM received for this session's model, in order. */
  requests: RecordedRequest[];
}

let session: LongSession | undefined;
const long = (): LongSession => {
  if (!session) throw new Error('the long session did not run: see the beforeAll failure');
  return session;
};

beforeAll(async () => {
  const model = `long-session-${Date.now()}`;
  await mkdir(workspace(), { recursive: true });
  for (let turn = 1; turn <= TURNS; turn++) {
    await writeFile(path.join(workspace(), fileName(turn)), fileText(turn));
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ name: 'read_file', input: { path: fileName(turn) } }] },
      { kind: 'text', text: answer(turn) },
    );
  }
  h().llm.setContextWindow(model, WINDOW);
  const started = await startSession(h().client, h().env, {
    model: `anthropic:${model}`,
    tools: ['read_file'],
    contextWindow: WINDOW,
    compactAt: COMPACT_AT,
    continueAsNewAfterEvents: CONTINUE_AS_NEW_AFTER_EVENTS,
    idleTimeoutMs: 300_000,
  });
  for (let turn = 1; turn <= TURNS; turn++) {
    const outcome = await sendAndWait(started, message(turn));
    if (outcome.status !== 'completed') throw new Error(`turn ${turn} ended ${outcome.status}: ${JSON.stringify(outcome.failure)}`);
  }
  const printed = await cliProcess('log', started.workflowId, '--json');
  if (printed.code !== 0) throw new Error(`log --json failed: ${printed.stderr}`);
  session = {
    model,
    workflowId: started.workflowId,
    firstRunId: started.firstExecutionRunId,
    log: JSON.parse(printed.stdout) as SessionEvent[],
    state: await handle(started.workflowId).query(stateQuery),
    requests: h().llm.requests({ model }),
  };
}, 240_000);

type Compaction = Extract<SessionEvent, { type: 'context/compacted' }>;
const compactionsOf = (log: SessionEvent[]) => log.filter((e): e is Compaction => e.type === 'context/compacted');

describe('a 60-turn session with 2 KiB tool results in an 8 000-token window', () => {
  it('runs every turn to completion, and log --json shows all 60 turns in order with every seq once', () => {
    const { log, state } = long();
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i));
    expect(log).toHaveLength(state.events);
    expect(log.flatMap((e) => (e.type === 'turn/start' ? [[e.turn, e.text]] : []))).toEqual(Array.from({ length: TURNS }, (_, i) => [i + 1, message(i + 1)]));
    expect(log.flatMap((e) => (e.type === 'turn/end' ? [[e.turn, e.status]] : []))).toEqual(Array.from({ length: TURNS }, (_, i) => [i + 1, 'completed']));
    // Each turn read its own file, in full, and its answer was recorded.
    const results = log.filter((e) => e.type === 'tool/result');
    expect(results.map((e) => [e.turn, e.code, e.content])).toEqual(Array.from({ length: TURNS }, (_, i) => [i + 1, 'ok', fileText(i + 1)]));
  });

  it('never sent the scripted LLM a request above the window, nor one it refused', () => {
    const { requests, model } = long();
    expect(requests.length).toBeGreaterThanOrEqual(2 * TURNS);
    expect(h().llm.requests({ model, replyKind: 'over_window' })).toEqual([]);
    expect(h().llm.requests({ model, replyKind: 'unpaired' })).toEqual([]);
    expect(requests.filter((r) => r.tokens > WINDOW).map((r) => r.tokens)).toEqual([]);
    expect(requests.filter((r) => r.outcome !== 'completed')).toEqual([]);
    // Without compaction the last requests would carry 60 files, 15 times the window.
    expect(Math.max(...requests.map((r) => r.tokens))).toBeGreaterThan(COMPACT_AT * WINDOW * 0.8);
  });

  it('never sent a tool call without its result, nor a result without its call', () => {
    const { requests } = long();
    expect(requests.flatMap((r) => unpairedToolCalls(r.body).map((id) => `request ${r.seq}: ${id}`))).toEqual([]);
  });

  it('compacts when the next request would pass compactAt of the window, each time through the last ended turn, before the running turn', () => {
    const { log, requests } = long();
    const compactions = compactionsOf(log);
    // About 550 tokens a turn and a threshold of 6 000: a compaction every nine turns or so.
    expect(compactions.length).toBeGreaterThanOrEqual(4);
    expect(requests.filter((r) => r.purpose === 'compact')).toHaveLength(compactions.length);
    let previousCut = -1;
    for (const c of compactions) {
      const what = `the compaction at seq ${c.seq} (turn ${c.turn})`;
      const cut = log[c.throughSeq];
      // The cut is the end of the turn before the running one: never inside a turn, never through the running turn.
      expect(cut, what).toMatchObject({ type: 'turn/end', turn: c.turn - 1, status: 'completed' });
      expect(c.throughSeq, what).toBeGreaterThan(previousCut);
      const running = log.filter((e) => e.turn === c.turn && e.seq < c.seq).map((e) => e.type);
      expect(running[0], what).toBe('turn/start');
      expect(running, what).not.toContain('turn/end');
      expect(c.tokensBefore, what).toBeGreaterThan(COMPACT_AT * WINDOW);
      expect(c.tokensAfter, what).toBeLessThan(c.tokensBefore / 2);
      previousCut = c.throughSeq;
    }
  });

  it('sends, after each compaction, its summary and the running turn, and nothing of the turns it covers', () => {
    const { log, requests } = long();
    const compactRequests = requests.filter((r) => r.purpose === 'compact');
    compactionsOf(log).forEach((c, k) => {
      const next = requests.find((r) => r.purpose === 'step' && r.seq > (compactRequests[k]?.seq ?? Infinity));
      const sent = JSON.stringify(next?.body);
      expect(sent).toContain(c.summary);
      expect(sent).toContain(message(c.turn));
      expect(sent).not.toContain(marker(c.turn - 1));
      expect(sent).not.toContain(message(c.turn - 1));
    });
  });

  it('continued as new at least three times, the latest run carried only the tail after a compaction', () => {
    const { state, log, firstRunId } = long();
    expect(state.runs).toBeGreaterThanOrEqual(4);
    expect(state.continuedFromRunId).toBeDefined();
    expect(state.continuedFromRunId).not.toBe(firstRunId);
    expect(state.firstSeq).toBeGreaterThan(0);
    expect(compactionsOf(log).map((c) => c.throughSeq + 1)).toContain(state.firstSeq);
  });

  // A closed run's Queries are answered by replaying it: on a loaded machine one can time
  // out (the server waits about 30 s) and be asked again, so this test has 180 s.
  it('fork --at an event of the first run gives a session that answers a new message', async () => {
    const { workflowId, firstRunId, model, log, state } = long();
    // The first run is closed: a worker answers its Query by replaying it.
    const first = await retryQueryTimeouts(() => handle(workflowId, firstRunId).query(stateQuery));
    expect(first.firstSeq).toBe(0);
    // The last turn the first run ended, long before the latest run's first event.
    const cut = log.filter((e) => e.type === 'turn/end' && e.seq < first.events).at(-1);
    expect(cut?.seq).toBeLessThan(state.firstSeq);
    const result = await cli('fork', workflowId, '--at', String(cut?.seq), '--json');
    expect(result.code, result.stderr).toBe(0);
    const fork = handle((JSON.parse(result.stdout) as { workflowId: string }).workflowId);
    h().llm.script(model, { kind: 'text', text: 'the fork goes on' });
    expect(await sendAndWait(fork, 'what did you read last?')).toMatchObject({ status: 'completed', turn: (cut?.turn ?? 0) + 1 });
    const forked = JSON.parse((await cli('log', fork.workflowId, '--json')).stdout) as SessionEvent[];
    expect(forked.at(-1)).toMatchObject({ type: 'turn/end', status: 'completed' });
    expect(forked.filter((e) => e.type === 'assistant').at(-1)).toMatchObject({ message: { text: 'the fork goes on' } });
    const sent = h().llm.requests({ model, purpose: 'step' }).at(-1);
    expect(sent?.tokens).toBeLessThanOrEqual(WINDOW);
    expect(unpairedToolCalls(sent?.body)).toEqual([]);
    await endSession(fork);
  }, 180_000);

  it('every run of the session replays from its history (history --all)', async () => {
    const { workflowId, firstRunId, state } = long();
    const file = path.join(workspace(), 'history', 'long.json');
    await mkdir(path.dirname(file), { recursive: true });
    const result = await cli('history', workflowId, '--out', file, '--all', '--json');
    expect(result.code, result.stderr).toBe(0);
    const { runs } = JSON.parse(result.stdout) as { runs: { runId: string; file: string }[] };
    expect(runs).toHaveLength(state.runs);
    expect(runs[0]?.runId).toBe(firstRunId);
    const histories = await Promise.all(runs.map(async (run) => ({ workflowId, history: historyFromJSON(JSON.parse(await readFile(run.file, 'utf8'))) })));
    const replayed: string[] = [];
    for await (const outcome of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories)) {
      replayed.push(outcome.error ? `${outcome.runId}: ${String(outcome.error)}` : 'ok');
    }
    expect(replayed).toEqual(runs.map(() => 'ok'));
    await endSession(handle(workflowId));
  }, 90_000);
});
