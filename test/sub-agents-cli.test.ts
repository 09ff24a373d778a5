/**
 * Sub-agents on the command line (docs/sub-agents.md): `start --agents` and
 * `--max-agent-depth`, `log`'s pointer to a child's session with its spend and failure,
 * `list --parent`, and `watch` following into a running child. One real worker serving a
 * `researcher` agent, the scripted LLM as every model, the run's dev server; each command
 * in this process (test/support/cli-in-process.ts), watch through the same watchSession
 * the command runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionHandle } from '../client/commands/command';
import { watchSession, type WatchItem } from '../client/watch';
import { readLog } from '../client/sessions';
import { awaitTurnUpdate, stateQuery } from '../contracts/api';
import { defineAgent } from '../contracts/agents/agent-definition';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { barrier, within } from './support/barrier';
import { runInProcess } from './support/cli-in-process';
import { blocksRunBy, DocLines } from './support/doc-blocks';

const TAG = Date.now();
const researcherModel = `cli-researcher-${TAG}`;
const researcher = defineAgent({ name: 'researcher', description: 'Finds things out.', model: `anthropic:${researcherModel}`, tools: ['calculator'], settings: { maxSteps: 20 } });

const h = useAgentHarness({ agents: [researcher] });
const env = () => clientEnvOf(h());
const cli = (...args: string[]) => runInProcess(args, env());

/** `start --json`'s session id. */
async function started(...args: string[]): Promise<string> {
  const out = await cli('start', ...args, '--json');
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  return (JSON.parse(out.stdout) as { workflowId: string }).workflowId;
}

/** The parent's model calls the researcher once, then answers with what it was told. */
function scriptParent(model: string, task: string, callId: string) {
  h().llm.script(model, { kind: 'tool_calls', calls: [{ id: callId, name: 'agent__researcher', input: { task } }] }, { kind: 'text', text: 'The researcher has answered.' });
}

/** The child session a parent's call started, from the parent's log. */
async function childOf(parentId: string): Promise<string> {
  const call = (await readLog(sessionHandle(h().client, parentId))).find((e) => e.type === 'tool/call' && e.child);
  if (call?.type !== 'tool/call' || !call.child) throw new Error(`no sub-agent call in ${parentId}`);
  return call.child.workflowId;
}

describe('start --agents and --max-agent-depth', () => {
  it("give the session its sub-agents and its tree's depth", async () => {
    const id = await started('--model', `anthropic:cli-idle-${TAG}`, '--agents', 'researcher', '--max-agent-depth', '2');
    const { settings } = await sessionHandle(h().client, id).query(stateQuery);
    expect(settings).toMatchObject({ agents: ['researcher'], maxAgentDepth: 2 });
  });

  it.each([
    [['--agents', 'no spaces'], '--agents: bad agent name "no spaces": must be 1 to 64 letters'],
    [['--agents', 'researcher,researcher'], '--agents gives researcher twice'],
    [['--agents', ','], '--agents needs a comma-separated list of agent names'],
    [['--max-agent-depth', '11'], '--max-agent-depth must be a whole number from 1 to 10, got "11"'],
  ])('refuses %j in one line naming the flag', async (flags, refusal) => {
    const out = await cli('start', '--model', 'anthropic:m', ...flags);
    expect(out.code).toBe(2);
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect(out.stderr).toContain(refusal);
  });
});

describe('a parent and its child on the command line, as docs/sub-agents.md runs them', () => {
  const parentModel = `cli-parent-${TAG}`;
  let parentId = '';
  let lines: DocLines;
  /** A documented `npm run client -- …` line, run in this process with `<id>` made the parent's id, the session's model the environment's. */
  const documented = (pattern: RegExp) => {
    const { argv } = lines.take(pattern);
    expect(argv.slice(0, 4)).toEqual(['npm', 'run', 'client', '--']);
    return runInProcess(
      argv.slice(4).map((word) => (word === '<id>' ? parentId : word)),
      { ...env(), AGENT_MODEL: `anthropic:${parentModel}` },
    );
  };

  beforeAll(async () => {
    lines = new DocLines(await blocksRunBy('test/sub-agents-cli.test.ts'));
    scriptParent(parentModel, 'What is 6*7?', 'toolu_cli_sub1');
    h().llm.script(researcherModel, { kind: 'text', text: 'It is 42.', usage: { inputTokens: 120, outputTokens: 7 } });
    const start = await documented(/-- start --agents researcher --prompt/);
    expect(start).toMatchObject({ code: 0, stderr: '' });
    parentId = (JSON.parse(start.stdout) as { workflowId: string }).workflowId;
    await sessionHandle(h().client, parentId).executeUpdate(awaitTurnUpdate, { args: [{ turn: 1 }] });
  });
  afterAll(() => {
    expect(lines.untaken()).toEqual([]);
  });

  it("log shows the child's answer, what it spent, and where its session is", async () => {
    const childId = await childOf(parentId);
    const out = await documented(/-- log <id>$/);
    expect(out.stdout).toContain(`→ agent__researcher {"task":"What is 6*7?"} #toolu_cli_sub1 → session ${childId}`);
    expect(out.stdout).toContain(`✓ agent__researcher: It is 42. · spent tokens in 120 · out 7 · cost unknown #toolu_cli_sub1 → session ${childId}`);
  });

  it('list --parent lists the sessions the parent started, and only those', async () => {
    const childId = await childOf(parentId);
    const out = await documented(/-- list --parent <id>$/);
    expect(out.code).toBe(0);
    expect(out.stdout.trim().split('\n').slice(1).map((row) => row.split(/\s+/)[0])).toEqual([childId]);
    expect((JSON.parse((await cli('list', '--parent', parentId, '--json')).stdout) as { workflowId: string }[]).map((s) => s.workflowId)).toEqual([childId]);
    const none = await cli('list', '--parent', `no-such-parent-${TAG}`);
    expect(none.stdout).toContain(`no sessions on task queue ${h().taskQueue} started by no-such-parent-${TAG}`);
  });
});

describe('watch of a parent', () => {
  it("follows into the running child: the child agent's own step and retry", async () => {
    const parentModel = `cli-parent-watch-${TAG}`;
    scriptParent(parentModel, 'Find it out.', 'toolu_cli_watch');
    // Held, so the watch is following the child before its call fails; then a retry long
    // enough that the watch sees it whatever the machine's load (the parent is then ended).
    h().llm.script(researcherModel, { kind: 'status', status: 529, headers: { 'retry-after': '20' }, hold: true });
    const parentId = await started('--model', `anthropic:${parentModel}`, '--agents', 'researcher', '--prompt', 'Ask the researcher.');
    const watched: WatchItem[] = [];
    const running = barrier();
    const retrying = barrier();
    const abort = new AbortController();
    const watching = watchSession(h().client, sessionHandle(h().client, parentId), {
      intervalMs: 200,
      signal: abort.signal,
      onItem: (item) => {
        watched.push(item);
        if (item.type !== 'progress') return;
        if (item.lines.some((l) => /^researcher · step 1\/20 · llm anthropic:\S+ · running/.test(l))) running.open();
        if (item.lines.some((l) => /^researcher · step 1\/20 · llm anthropic:\S+ · retrying in \d+ s \(attempt 2\/11\): overloaded/.test(l))) retrying.open();
      },
    });
    try {
      // Bounded: a watch that never shows the child fails here.
      await within(running.wait(), 'the child running in the parent’s watch');
      expect(h().llm.release(researcherModel)).toBe(1);
      await within(retrying.wait(), 'the child’s retry in the parent’s watch');
    } finally {
      abort.abort();
      await watching;
      // The parent-close policy cancels the child.
      await sessionHandle(h().client, parentId).terminate('the test has seen what it watched for');
    }
    const progress = watched.flatMap((item) => (item.type === 'progress' ? [item] : []));
    const withChild = progress.find((item) => item.child);
    expect(withChild).toMatchObject({ child: { agent: 'researcher', step: 1, maxSteps: 20, phase: 'llm' } });
    // The parent's own line first: its step waits on its tools, the child among them.
    expect(withChild?.lines[0]).toBe('turn 1 · step 1/50 · tools');
    expect(withChild?.lines.slice(1).every((line) => line.startsWith('researcher · step 1/20 · '))).toBe(true);
  });
});

describe("a failed child in the parent's log", () => {
  it("shows the child's failure type beside the error the model read", async () => {
    const parentModel = `cli-parent-failed-${TAG}`;
    scriptParent(parentModel, 'Look this up.', 'toolu_cli_sub2');
    h().llm.script(researcherModel, { kind: 'status', status: 400 });
    const id = await started('--model', `anthropic:${parentModel}`, '--agents', 'researcher', '--prompt', 'Ask the researcher.');
    await sessionHandle(h().client, id).executeUpdate(awaitTurnUpdate, { args: [{ turn: 1 }] });
    const out = await cli('log', id);
    expect(out.stdout).toMatch(/✗ agent__researcher error: .+ · invalid_request .*#toolu_cli_sub2 → session \S+/);
  });
});
