import { describe, expect, it } from 'vitest';
import type { SessionSummary } from '../client/list-sessions';
import { endSession, sendAndWait, startSession } from '../client/sessions';
import { stateQuery } from '../contracts/api';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';
import { runInProcess } from './support/cli-in-process';
import { eventually } from './support/eventually';

/** Its own harness, so its task queue holds only the sessions this file starts: `list` shows a queue's sessions. */
const h = useAgentHarness();

const env = () => clientEnvOf(h());
/** The CLI's process, as a user starts it: for the first command line here, so the process around it stays proven. */
const cliProcess = (...args: string[]) => runEntry('client/main.ts', args, env());
/** The same command line in this process (client/command-line.ts, as the CLI runs it): the rest, without a process start each. */
const cli = (...args: string[]) => runInProcess(args, env());
const json = <T>(stdout: string) => JSON.parse(stdout) as T;

describe('npm run client -- list', () => {
  it('lists the sessions of this task queue from visibility, with their status, model and step count, and filters by --status', async () => {
    const tag = `list-${Date.now()}`;
    h().llm.script(`${tag}-failed`, { kind: 'status', status: 401 });
    const idle = await startSession(h().client, h().env, { model: `anthropic:echo-${tag}` });
    await sendAndWait(idle, 'hello');
    const failed = await startSession(h().client, h().env, { model: `openai:${tag}-failed` });
    await sendAndWait(failed, 'hello');
    const ended = await startSession(h().client, h().env, { model: `google:echo-${tag}` });
    await endSession(ended);
    await ended.result();

    const expected: Record<string, Partial<SessionSummary>> = {
      [idle.workflowId]: { status: 'idle', model: `anthropic:echo-${tag}`, steps: 1, closeTime: null },
      [failed.workflowId]: { status: 'failed', model: `openai:${tag}-failed`, steps: 1 },
      [ended.workflowId]: { status: 'ended', model: `google:echo-${tag}`, steps: 0, closeTime: expect.any(String) },
    };
    // Visibility is eventually consistent: the last upsert of a search attribute may lag a moment.
    const listed = (want: string[], ...args: string[]) =>
      eventually(
        `\`list --json ${args.join(' ')}\` to show exactly ${JSON.stringify(want)} with their final statuses`,
        async () => {
          const result = await cli('list', '--json', ...args);
          expect(result.code, result.stderr).toBe(0);
          const sessions = json<SessionSummary[]>(result.stdout);
          const ids = sessions.map((s) => s.workflowId).sort();
          const settled = JSON.stringify(ids) === JSON.stringify([...want].sort()) && sessions.every((s) => s.status === expected[s.workflowId]?.status);
          if (!settled) throw new Error(`it listed ${JSON.stringify(sessions.map((s) => [s.workflowId, s.status]))}`);
          return sessions;
        },
        10_000,
        250,
      );

    const all = await listed(Object.keys(expected));
    expect(all.map((s) => s.workflowId).sort()).toEqual(Object.keys(expected).sort());
    for (const s of all) expect(s).toMatchObject({ ...expected[s.workflowId], runId: expect.any(String), startTime: expect.any(String) });

    for (const status of ['idle', 'failed', 'ended'] as const) {
      const want = Object.keys(expected).filter((id) => expected[id]?.status === status);
      expect((await listed(want, '--status', status)).map((s) => s.workflowId)).toEqual(want);
    }
    expect(await listed([], '--status', 'running')).toEqual([]);

    const table = await cliProcess('list');
    expect(table.stdout.split('\n')[0]).toMatch(/^SESSION\s+STATUS\s+MODEL\s+STEPS\s+COST\s+STARTED$/);
    // An unpriced model: its cost is unknown, shown as -.
    expect(table.stdout).toMatch(new RegExp(`${idle.workflowId}\\s+idle\\s+anthropic:echo-${tag}\\s+1\\s+-\\s+\\d{4}-`));
    await Promise.all([idle.terminate('test cleanup'), failed.terminate('test cleanup')]);
  });

  it('lists a session that continued as new once, by its latest run', async () => {
    const session = await startSession(h().client, h().env, { model: `anthropic:echo-can-${Date.now()}`, continueAsNewAfterEvents: 20 });
    for (const text of ['one', 'two', 'three']) await sendAndWait(session, text);
    await eventually('the session to continue as new (its state counting 2 runs)', async () => ((await session.query(stateQuery)).runs >= 2 ? true : undefined), 10_000);
    const rows = await eventually(
      '`list --json` to show the session once, by its latest run, with its 3 steps',
      async () => {
        const found = json<SessionSummary[]>((await cli('list', '--json')).stdout).filter((s) => s.workflowId === session.workflowId);
        if (found.length !== 1 || found[0]?.steps !== 3) throw new Error(`it listed ${JSON.stringify(found)}`);
        return found;
      },
      10_000,
      250,
    );
    expect(rows).toEqual([expect.objectContaining({ workflowId: session.workflowId, status: 'idle', steps: 3 })]);
    expect(rows[0]?.runId).not.toBe(session.firstExecutionRunId);
    await session.terminate('test cleanup');
  });

  it('refuses an unknown --status in one line with exit code 2', async () => {
    const result = await cli('list', '--status', 'sleeping');
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual(['client: --status must be one of running, idle, failed, ended, got "sleeping"']);
  });
});
