import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { SessionSummary } from '../client/list-sessions';
import { endSession, sendAndWait, startSession } from '../client/sessions';
import { stateQuery } from '../contracts/api';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';

/** Its own harness, so its task queue holds only the sessions this file starts: `list` shows a queue's sessions. */
const h = useAgentHarness();

const env = () => clientEnvOf(h());
const cli = (...args: string[]) => runEntry('client/main.ts', args, env());
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
    const listed = async (want: string[], ...args: string[]) => {
      for (let i = 0; ; i++) {
        const result = await cli('list', '--json', ...args);
        expect(result.code, result.stderr).toBe(0);
        const sessions = json<SessionSummary[]>(result.stdout);
        const ids = sessions.map((s) => s.workflowId).sort();
        const settled = JSON.stringify(ids) === JSON.stringify([...want].sort()) && sessions.every((s) => s.status === expected[s.workflowId]?.status);
        if (settled || i >= 10) return sessions;
        await sleep(250);
      }
    };

    const all = await listed(Object.keys(expected));
    expect(all.map((s) => s.workflowId).sort()).toEqual(Object.keys(expected).sort());
    for (const s of all) expect(s).toMatchObject({ ...expected[s.workflowId], runId: expect.any(String), startTime: expect.any(String) });

    for (const status of ['idle', 'failed', 'ended'] as const) {
      const want = Object.keys(expected).filter((id) => expected[id]?.status === status);
      expect((await listed(want, '--status', status)).map((s) => s.workflowId)).toEqual(want);
    }
    expect(await listed([], '--status', 'running')).toEqual([]);

    const table = await cli('list');
    expect(table.stdout.split('\n')[0]).toMatch(/^SESSION\s+STATUS\s+MODEL\s+STEPS\s+COST\s+STARTED$/);
    // An unpriced model: its cost is unknown, shown as -.
    expect(table.stdout).toMatch(new RegExp(`${idle.workflowId}\\s+idle\\s+anthropic:echo-${tag}\\s+1\\s+-\\s+\\d{4}-`));
    await Promise.all([idle.terminate('test cleanup'), failed.terminate('test cleanup')]);
  });

  it('lists a session that continued as new once, by its latest run', async () => {
    const session = await startSession(h().client, h().env, { model: `anthropic:echo-can-${Date.now()}`, continueAsNewAfterEvents: 20 });
    for (const text of ['one', 'two', 'three']) await sendAndWait(session, text);
    for (let i = 0; (await session.query(stateQuery)).runs < 2; i++) {
      if (i > 100) throw new Error('the session never continued as new');
      await sleep(100);
    }
    let rows: SessionSummary[] = [];
    for (let i = 0; i < 10; i++) {
      rows = json<SessionSummary[]>((await cli('list', '--json')).stdout).filter((s) => s.workflowId === session.workflowId);
      if (rows.length === 1 && rows[0]?.steps === 3) break;
      await sleep(250);
    }
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
