import { describe, expect, it } from 'vitest';
import { awaitTurnUpdate, stateQuery } from '../contracts/api';
import type { agentSession } from '../workflows/session';
import { positionIdempotencyKey } from '../contracts/tools/idempotency-key';
import type { RunToolRequest, ToolOutcome } from '../contracts/tools/tool-outcome';
import { readLog, turnOutcomeOf, type TurnResult } from '../client/sessions';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';
import { runInProcess } from './support/cli-in-process';
import { eventually } from './support/eventually';
import { spawnEntry } from './support/spawn-cli';

/** Every tool call the worker dispatched, in order; the tool itself is a stand-in that always succeeds. */
const dispatched: RunToolRequest[] = [];
async function runTool(request: RunToolRequest): Promise<ToolOutcome> {
  dispatched.push(request);
  return { code: 'ok', content: `${request.name} done` };
}

const h = useAgentHarness({ runTool });

const env = () => clientEnvOf(h());
/** The CLI's process, as a user starts it: for a few command lines, so the process around them stays proven. */
const cliProcess = (...args: string[]) => runEntry('client/main.ts', args, env());
/** The same command line in this process (client/command-line.ts, as the CLI runs it): the rest, without a process start each. */
const cli = (...args: string[]) => runInProcess(args, env());
const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>;

let models = 0;
const newModel = (name: string) => `approval-${name}-${++models}-${Date.now()}`;

const WRITE = { name: 'write_file', input: { path: 'notes/plan.txt', content: 'ship it' } };

/** `start` through the CLI, as a user would; returns the session id. */
async function startSession(model: string, ...flags: string[]): Promise<string> {
  const started = await cli('start', '--model', `anthropic:${model}`, '--json', ...flags);
  expect(started.code, started.stderr).toBe(0);
  return String(json(started.stdout).workflowId);
}

function handle(id: string) {
  return h().client.workflow.getHandle<typeof agentSession>(id);
}

async function waitForApproval(id: string, callId: string, turn?: number): Promise<void> {
  await eventually(
    `call ${callId} to wait for approval${turn === undefined ? '' : ` in turn ${turn}`}`,
    async () => {
      const state = await handle(id).query(stateQuery);
      if (state.pendingApprovals.some((a) => a.callId === callId && (turn === undefined || a.turn === turn))) return true;
      throw new Error(`phase ${state.phase}, pending approvals ${JSON.stringify(state.pendingApprovals)}`);
    },
    20_000,
    50,
  );
}

async function turnOutcome(id: string, turn: number): Promise<TurnResult> {
  return handle(id)
    .executeUpdate(awaitTurnUpdate, { args: [{ turn }] })
    .then((o): TurnResult => ({ status: o.status, turn: o.turn }), (error: unknown) => turnOutcomeOf(error) ?? Promise.reject(error));
}

const toolResults = async (id: string) =>
  (await readLog(handle(id))).flatMap((e) => (e.type === 'tool/result' ? [{ callId: e.callId, code: e.code, content: e.content }] : []));

/** The tool results the model was sent, from the requests the scripted LLM saw. */
const toolResultsSentToModel = (model: string) => JSON.stringify(h().llm.requests({ model }).map((r) => r.body));

describe('human approval of side-effecting tool calls', () => {
  it('holds a listed tool call until approved, shows the wait in watch, runs the call once, and a second approval changes nothing', async () => {
    const model = newModel('approve');
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_appr_ok', ...WRITE }] }, { kind: 'text', text: 'Saved the plan.' });
    const id = await startSession(model, '--approve-tools', 'write_file');

    const sent = await cli('send', id, 'save the plan');
    expect(sent.code, sent.stderr).toBe(0);
    await waitForApproval(id, 'toolu_appr_ok');
    const watch = spawnEntry('client/main.ts', ['watch', id, '--until-idle'], env());
    try {
      await watch.waitFor(/waiting for approval of write_file #toolu_appr_ok/);
      // The hint to copy may arrive in the next chunk of output.
      await watch.waitFor(new RegExp(`npm run client -- approve ${id} toolu_appr_ok`));
      // Nothing ran while the session waited.
      expect(dispatched.filter((d) => d.callId === 'toolu_appr_ok')).toHaveLength(0);
      expect((await handle(id).query(stateQuery)).phase).toBe('approval');

      const approved = await cliProcess('approve', id, 'toolu_appr_ok', '--json');
      expect(approved.code, approved.stderr).toBe(0);
      expect(json(approved.stdout)).toEqual({ workflowId: id, callId: 'toolu_appr_ok', approved: true, applied: true });

      expect(await watch.exited).toBe(0);
      expect(watch.stdout()).toMatch(/✓ write_file: write_file done #toolu_appr_ok/);
      expect(watch.stdout()).toContain('Saved the plan.');
    } finally {
      watch.kill();
    }
    expect(await turnOutcome(id, 1)).toMatchObject({ status: 'completed' });

    const again = await cli('approve', id, 'toolu_appr_ok', '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(json(again.stdout)).toMatchObject({ callId: 'toolu_appr_ok', applied: false });
    const againHuman = await cli('approve', id, 'toolu_appr_ok');
    expect(againHuman.stdout).toMatch(/already decided .*nothing changed/);

    expect(dispatched.filter((d) => d.callId === 'toolu_appr_ok')).toHaveLength(1);
    expect(await toolResults(id)).toEqual([{ callId: 'toolu_appr_ok', code: 'ok', content: 'write_file done' }]);
    await handle(id).terminate('test cleanup');
  });

  it('never runs a denied call: the model reads "a human denied it" with the reason, and the turn goes on to its answer', async () => {
    const model = newModel('deny');
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_appr_no', ...WRITE }] }, { kind: 'text', text: 'Understood, I will not write it.' });
    const id = await startSession(model, '--approve-tools', 'write_file');
    await cli('send', id, 'save the plan');
    await waitForApproval(id, 'toolu_appr_no');

    const denied = await cliProcess('deny', id, 'toolu_appr_no', '--reason', 'not on a Friday');
    expect(denied.code, denied.stderr).toBe(0);
    expect(denied.stdout).toContain('denied call toolu_appr_no');

    expect(await turnOutcome(id, 1)).toMatchObject({ status: 'completed' });
    expect(dispatched.filter((d) => d.callId === 'toolu_appr_no')).toHaveLength(0);
    const [result] = await toolResults(id);
    expect(result).toMatchObject({ callId: 'toolu_appr_no', code: 'error' });
    expect(result?.content).toContain('a human denied it: not on a Friday');
    expect(h().llm.requests({ model })).toHaveLength(2);
    expect(toolResultsSentToModel(model)).toContain('a human denied it: not on a Friday');
    const log = await cli('log', id);
    expect(log.stdout).toContain('Understood, I will not write it.');
    await handle(id).terminate('test cleanup');
  });

  it('answers a call nobody decided within --approval-timeout with an error result, goes on, and ignores a late approval', async () => {
    const model = newModel('timeout');
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_appr_late', ...WRITE }] }, { kind: 'text', text: 'Nobody answered; skipped.' });
    const id = await startSession(model, '--approve-tools', '*', '--approval-timeout', '1');
    const started = Date.now();
    const sent = await cli('send', id, 'save the plan', '--wait', '--json');
    expect(sent.code, sent.stderr).toBe(0);
    const turn = json(sent.stdout);
    expect(turn).toMatchObject({ workflowId: id, turn: 1, status: 'completed' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);

    const [result] = await toolResults(id);
    expect(result).toMatchObject({ callId: 'toolu_appr_late', code: 'error' });
    expect(result?.content).toContain('no human approved it within 1 s');
    expect(toolResultsSentToModel(model)).toContain('no human approved it within 1 s');
    expect((turn.messages as { text?: string }[]).at(-1)?.text).toBe('Nobody answered; skipped.');

    const late = await cli('approve', id, 'toolu_appr_late', '--json');
    expect(late.code, late.stderr).toBe(0);
    expect(json(late.stdout)).toMatchObject({ applied: false });
    expect(dispatched.filter((d) => d.callId === 'toolu_appr_late')).toHaveLength(0);
    await handle(id).terminate('test cleanup');
  });

  it('asks only about the tools named: an unlisted side-effecting call and a read-only call run at once', async () => {
    const model = newModel('per-tool');
    h().llm.script(
      model,
      {
        kind: 'tool_calls',
        calls: [
          { id: 'toolu_appr_calc', name: 'calculator', input: { expression: '2+2' } },
          { id: 'toolu_appr_write', ...WRITE },
        ],
      },
      { kind: 'text', text: 'Both done.' },
    );
    const id = await startSession(model, '--approve-tools', 'http_request');
    const sent = await cli('send', id, 'compute and save', '--wait', '--json');
    expect(sent.code, sent.stderr).toBe(0);
    expect(json(sent.stdout)).toMatchObject({ status: 'completed' });
    expect(dispatched.map((d) => d.callId)).toEqual(expect.arrayContaining(['toolu_appr_calc', 'toolu_appr_write']));
    expect((await toolResults(id)).map((r) => r.code)).toEqual(['ok', 'ok']);
    await handle(id).terminate('test cleanup');
  });

  it('takes --approve-tools on run too: the turn waits, times out, and run reports the model going on', async () => {
    const model = newModel('run');
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_appr_run', ...WRITE }] }, { kind: 'text', text: 'Skipped it.' });
    const result = await cli('run', '--prompt', 'save the plan', '--model', `anthropic:${model}`, '--approve-tools', 'write_file', '--approval-timeout', '1', '--json');
    expect(result.code, result.stderr).toBe(0);
    const out = json(result.stdout);
    expect(out.status).toBe('completed');
    expect(JSON.stringify(out.messages)).toContain('no human approved it within 1 s');
    expect(dispatched.filter((d) => d.callId === 'toolu_appr_run')).toHaveLength(0);
  });

  it("waits again for a later turn's call that reuses a denied call's id: the earlier denial does not answer it, and the approval runs it once, under its own Idempotency-Key", async () => {
    const model = newModel('reused');
    const call = { id: 'toolu_appr_reused', ...WRITE };
    h().llm.script(model, { kind: 'tool_calls', calls: [call] }, { kind: 'text', text: 'Not saved.' }, { kind: 'tool_calls', calls: [call] }, { kind: 'text', text: 'Saved now.' });
    const id = await startSession(model, '--approve-tools', 'write_file');
    await cli('send', id, 'save the plan');
    await waitForApproval(id, 'toolu_appr_reused', 1);
    expect((await cli('deny', id, 'toolu_appr_reused', '--reason', 'not yet')).code).toBe(0);
    expect(await turnOutcome(id, 1)).toMatchObject({ status: 'completed' });

    await cli('send', id, 'save it now');
    await waitForApproval(id, 'toolu_appr_reused', 2);
    expect(dispatched.filter((d) => d.callId === 'toolu_appr_reused')).toHaveLength(0);
    const approved = await cli('approve', id, 'toolu_appr_reused', '--json');
    expect(json(approved.stdout)).toMatchObject({ callId: 'toolu_appr_reused', approved: true, applied: true });
    expect(await turnOutcome(id, 2)).toMatchObject({ status: 'completed' });

    // The key of turn 2's call, not the one its id alone would give: a server that saw the
    // earlier call's key would drop this one as a repeat.
    expect(dispatched.filter((d) => d.callId === 'toolu_appr_reused').map((d) => d.idempotencyKey)).toEqual([
      positionIdempotencyKey(id, { turn: 2, step: 1, callId: 'toolu_appr_reused' }),
    ]);
    expect((await toolResults(id)).map((r) => r.code)).toEqual(['error', 'ok']);
    await handle(id).terminate('test cleanup');
  });

  it('refuses, in one line and with exit code 1, a decision about a call that is not waiting', async () => {
    const model = newModel('bogus');
    const id = await startSession(`echo-${model}`);
    const result = await cli('approve', id, 'toolu_never_asked');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^client: the session refused: .*no tool call toolu_never_asked is waiting for approval/)]);
    await handle(id).terminate('test cleanup');
  });
});
