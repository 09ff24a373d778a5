import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { endSession, forkSession, sendAndWait, startSession } from '../client/sessions';
import { watchSession } from '../client/watch';
import { workflowBundle } from '../harness/local-agent';
import { logQuery, stateQuery } from '../contracts/api';
import type { agentSession } from '../workflows/session';
import type { SessionEvent } from '../contracts/session-log';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';
import { runInProcess } from './support/cli-in-process';
import { useTempDir } from './support/temp-dir';

const h = useAgentHarness();
const dir = useTempDir('client-log-chain-');
/** The CLI's process, as a user starts it: for a few command lines, so the process around them stays proven. */
const cliProcess = (...args: string[]) => runEntry('client/main.ts', args, clientEnvOf(h()));
/** The same command line in this process (client/command-line.ts, as the CLI runs it): the rest, without a process start each. */
const cli = (...args: string[]) => runInProcess(args, clientEnvOf(h()));
const handle = (id: string, runId?: string) => h().client.workflow.getHandle<typeof agentSession>(id, runId);

const TURNS = 8;
const message = (turn: number) => `message number ${turn}`;

/**
 * A session that compacts before nearly every step (a 1000-token window, compacting at a
 * tenth of it: the tool specs alone are more) and continues as new after 20 history
 * events, so each run holds only the tail after the last compaction and the log is spread
 * over several runs.
 */
async function longSession(): Promise<{ workflowId: string; firstRunId: string }> {
  const session = await startSession(h().client, h().env, {
    model: `anthropic:echo-log-chain-${Date.now()}`,
    contextWindow: 1_000,
    compactAt: 0.1,
    continueAsNewAfterEvents: 20,
    idleTimeoutMs: 300_000,
  });
  for (let turn = 1; turn <= TURNS; turn++) expect((await sendAndWait(session, message(turn))).status).toBe('completed');
  return { workflowId: session.workflowId, firstRunId: session.firstExecutionRunId };
}

describe('a session log spread over several runs', () => {
  let session: { workflowId: string; firstRunId: string } | undefined;
  const long = async () => (session ??= await longSession());

  it('log --json shows every event of every run once, in order, with the compactions, though the latest run holds only the tail', async () => {
    const { workflowId } = await long();
    const state = await handle(workflowId).query(stateQuery);
    expect(state.runs).toBeGreaterThanOrEqual(2);
    expect(state.firstSeq).toBeGreaterThan(0);
    expect(state.continuedFromRunId).toBeDefined();

    const result = await cliProcess('log', workflowId, '--json');
    expect(result.code, result.stderr).toBe(0);
    const events = JSON.parse(result.stdout) as SessionEvent[];
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    expect(events).toHaveLength(state.events);
    expect(events.flatMap((e) => (e.type === 'turn/start' ? [e.text] : []))).toEqual(Array.from({ length: TURNS }, (_, i) => message(i + 1)));
    expect(events.filter((e) => e.type === 'turn/end' && e.status === 'completed')).toHaveLength(TURNS);
    const compactions = events.filter((e) => e.type === 'context/compacted');
    expect(compactions.length).toBeGreaterThanOrEqual(2);
    // The latest run was carried the events after its last compaction's cut, seqs kept.
    expect(state.firstSeq).toBeLessThanOrEqual((compactions.at(-1)?.throughSeq ?? 0) + 1);
  });

  it('log shows each compaction as one line with its tokens and where it cut', async () => {
    const { workflowId } = await long();
    const result = await cli('log', workflowId);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n').filter((line) => line.includes(' · compact · '));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(line).toMatch(/^\s*\d+ {2}turn \d+ · compact · \d+ → \d+ tokens \(through event \d+\)$/);
  });

  it('fork --at an event of the first run gives a session with the log up to it, which goes on', async () => {
    const { workflowId } = await long();
    const cut = 4;
    const result = await cli('fork', workflowId, '--at', String(cut), '--json');
    expect(result.code, result.stderr).toBe(0);
    const fork = handle((JSON.parse(result.stdout) as { workflowId: string }).workflowId);
    const forked = JSON.parse((await cli('log', fork.workflowId, '--json')).stdout) as SessionEvent[];
    expect(forked.slice(0, cut + 1).map((e) => [e.seq, e.type])).toEqual([
      [0, 'turn/start'],
      [1, 'step/start'],
      [2, 'assistant'],
      [3, 'step/end'],
      [4, 'turn/end'],
    ]);
    expect(await sendAndWait(fork, 'and now?')).toMatchObject({ status: 'completed', turn: 2 });
    await endSession(fork);
  });

  it('fork of the whole log carries only the tail after the last compaction, and goes on from the next turn', async () => {
    const { workflowId } = await long();
    const result = await cli('fork', workflowId, '--json');
    expect(result.code, result.stderr).toBe(0);
    const fork = handle((JSON.parse(result.stdout) as { workflowId: string }).workflowId);
    const source = JSON.parse((await cli('log', workflowId, '--json')).stdout) as SessionEvent[];
    const lastCompaction = source.filter((e) => e.type === 'context/compacted').at(-1);
    const state = await fork.query(stateQuery);
    const firstSeq = (lastCompaction?.type === 'context/compacted' ? lastCompaction.throughSeq : -1) + 1;
    expect(state.firstSeq).toBe(firstSeq);
    const printed = await cli('log', fork.workflowId);
    expect(printed.stdout.split('\n')[0]).toBe(`(the log starts at event ${firstSeq}: the events before it are in ${workflowId}, which this session was forked from)`);
    expect(await sendAndWait(fork, 'still there?')).toMatchObject({ status: 'completed', turn: TURNS + 1 });
    await endSession(fork);
  });

  it('send --wait follows the new turn from the session\'s next seq, in a run whose log starts above 0; --json gives its messages as written, not as the model was sent them', async () => {
    const { workflowId } = await long();
    const before = await handle(workflowId).query(stateQuery);
    expect(before.firstSeq).toBeGreaterThan(0);
    const human = await cli('send', workflowId, 'one more', '--wait');
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(`turn ${TURNS + 1} · you: one more`);
    // It compacts first (the window is tiny), and the echo shows the summary sent in front of the message.
    expect(human.stdout).toMatch(new RegExp(`^turn ${TURNS + 1} · compact · \\d+ → \\d+ tokens \\(through event \\d+\\)$`, 'm'));
    expect(human.stdout).toMatch(new RegExp(`^turn ${TURNS + 1} · step 1 · assistant: You said: The conversation before this message [^]*one more$`, 'm'));
    expect(human.stdout).not.toContain(message(TURNS));
    const json = await cli('send', workflowId, 'and one more', '--wait', '--json');
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ turn: TURNS + 2, status: 'completed', messages: [{ role: 'user', text: 'and one more' }, { role: 'assistant', text: expect.stringMatching(/and one more$/) }] });
  });

  it('watch from a seq below the latest run\'s first event reads the events before it from the earlier runs, none skipped', async () => {
    const { workflowId } = await long();
    const state = await handle(workflowId).query(stateQuery);
    expect(state.firstSeq).toBeGreaterThan(3);
    const seen: number[] = [];
    const ended = await watchSession(h().client, handle(workflowId), {
      fromSeq: 3,
      untilIdle: true,
      onItem: (item) => {
        if (item.type === 'event') seen.push(item.event.seq);
      },
    });
    expect(ended).toBe('idle');
    expect(seen).toEqual(Array.from({ length: state.events - 3 }, (_, i) => i + 3));
  });

  it("a fork reads each earlier run's state once, and a Query the server timed out is asked again", async () => {
    const { workflowId } = await long();
    const latestRunId = (await handle(workflowId).describe()).runId;
    const asked: string[] = [];
    let timeOutOnce = true;
    // The harness's client, with every Query counted, and the first page of a closed run
    // failing as the server fails a Query no worker answered in time.
    const counted = new Proxy(h().client.workflow, {
      get(target, key, receiver) {
        if (key !== 'getHandle') return Reflect.get(target, key, receiver);
        return (id: string, runId?: string) => {
          const real = target.getHandle(id, runId);
          return new Proxy(real, {
            get(on, prop, r) {
              if (prop !== 'query') return Reflect.get(on, prop, r);
              return async (query: { name: string } | string, ...args: unknown[]) => {
                const name = typeof query === 'string' ? query : query.name;
                asked.push(`${name} ${runId ?? 'latest'}`);
                if (name === logQuery.name && runId !== undefined && runId !== latestRunId && timeOutOnce) {
                  timeOutOnce = false;
                  await h().client.withDeadline(Date.now() - 1, () => real.query(stateQuery));
                }
                return (real.query as (q: typeof query, ...a: unknown[]) => Promise<unknown>)(query, ...args);
              };
            },
          });
        };
      },
    });
    const client = new Proxy(h().client, { get: (target, key, receiver) => (key === 'workflow' ? counted : Reflect.get(target, key, receiver)) });
    const fork = await forkSession(client, h().env, workflowId, { atSeq: 4 });
    expect(timeOutOnce).toBe(false);
    const closedStates = asked.filter((a) => a.startsWith(`${stateQuery.name} `) && !a.endsWith(' latest') && !a.endsWith(latestRunId));
    expect(closedStates.length).toBeGreaterThanOrEqual(1);
    expect(new Set(closedStates).size).toBe(closedStates.length);
    expect((await fork.query(stateQuery)).events).toBe(5);
    await endSession(fork);
  });

  it('history --all writes one history per run, first to last, and every one replays', async () => {
    const { workflowId, firstRunId } = await long();
    const file = path.join(dir(), 'chain.json');
    const result = await cli('history', workflowId, '--out', file, '--all', '--json');
    expect(result.code, result.stderr).toBe(0);
    const { runs } = JSON.parse(result.stdout) as { runs: { runId: string; file: string; events: number }[] };
    const state = await handle(workflowId).query(stateQuery);
    expect(runs).toHaveLength(state.runs);
    expect(runs[0]?.runId).toBe(firstRunId);
    expect(runs.map((r) => path.basename(r.file))).toEqual(runs.map((_, i) => `chain.run-${i + 1}.json`));
    const bundle = await workflowBundle();
    for (const run of runs) {
      const history = historyFromJSON(JSON.parse(await readFile(run.file, 'utf8')));
      expect(history.events).toHaveLength(run.events);
      await Worker.runReplayHistory({ workflowBundle: bundle }, history, workflowId);
    }
    await endSession(handle(workflowId));
  });
});
