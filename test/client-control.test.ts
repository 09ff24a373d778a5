import { describe, expect, it } from 'vitest';
import { readLog, sendAndWait, startSession } from '../client/sessions';
import { sendMessage } from '../client/turn-control';
import { stateQuery } from '../contracts/api';
import { DEFAULT_RETRY_POLICY } from '../contracts/retry-policy';
import type { RunToolRequest, ToolOutcome } from '../contracts/tools/tool-outcome';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';
import { runInProcess } from './support/cli-in-process';
import { eventually } from './support/eventually';
import { untilCancelled } from './support/tool-stubs';

/** Tool calls the worker dispatched. `http_request` stands for a slow side effect: it runs until cancelled. */
const dispatched: RunToolRequest[] = [];
async function runTool(request: RunToolRequest): Promise<ToolOutcome> {
  dispatched.push(request);
  if (request.name !== 'http_request') return { code: 'ok', content: `${request.name} done` };
  return untilCancelled();
}

const h = useAgentHarness({ runTool });

const env = () => clientEnvOf(h());
/** The CLI's process, as a user starts it: for a few command lines, so the process around them stays proven. */
const cliProcess = (...args: string[]) => runEntry('client/main.ts', args, env());
/** The same command line in this process (client/command-line.ts, as the CLI runs it): the rest, without a process start each. */
const cli = (...args: string[]) => runInProcess(args, env());
const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>;

let models = 0;
const newModel = (name: string) => `control-${name}-${++models}-${Date.now()}`;

/** Generous: on a loaded 2-core machine a workflow task and an activity start can take seconds. */
const dispatchedCall = (callId: string) => eventually(`the worker to dispatch ${callId}`, () => (dispatched.some((d) => d.callId === callId) ? true : undefined), 45_000, 50);

describe('npm run client -- cancel', () => {
  it('cancels the running turn: the running call gets TOOL_OUTCOME_UNKNOWN, the next one TOOL_NOT_STARTED, nothing is retried, and the session takes the next message', async () => {
    const model = newModel('cancel');
    h().llm.script(
      model,
      {
        kind: 'tool_calls',
        calls: [
          { id: 'toolu_cancel_post', name: 'http_request', input: { method: 'POST', url: 'http://127.0.0.1:9/orders', body: '{}' } },
          { id: 'toolu_cancel_calc', name: 'calculator', input: { expression: '1+1' } },
        ],
      },
      { kind: 'text', text: 'Fine, stopped.' },
    );
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}` });
    await sendMessage(session, 'place the order');
    await dispatchedCall('toolu_cancel_post');

    const result = await cliProcess('cancel', session.workflowId, '--json');
    expect(result.code, result.stderr).toBe(0);
    expect(json(result.stdout)).toEqual({
      workflowId: session.workflowId,
      cancelled: true,
      turn: 1,
      status: 'cancelled',
      failure: { type: 'cancelled', message: expect.any(String) },
      compensated: [
        { callId: 'toolu_cancel_post', name: 'http_request', code: 'TOOL_OUTCOME_UNKNOWN' },
        { callId: 'toolu_cancel_calc', name: 'calculator', code: 'TOOL_NOT_STARTED' },
      ],
    });
    // The abort path: no second LLM call, no second dispatch, the calculator never ran.
    expect(h().llm.requests({ model })).toHaveLength(1);
    expect(dispatched.filter((d) => d.callId.startsWith('toolu_cancel_')).map((d) => d.callId)).toEqual(['toolu_cancel_post']);
    expect((await readLog(session)).at(-1)).toMatchObject({ type: 'turn/end', status: 'cancelled' });

    expect(await sendAndWait(session, 'never mind')).toMatchObject({ status: 'completed', turn: 2 });
    await session.terminate('test cleanup');
  });

  it('prints the cancelled turn and its compensation results for people', async () => {
    const model = newModel('cancel-human');
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_cancel_h', name: 'http_request', input: { method: 'POST', url: 'http://127.0.0.1:9/x', body: '{}' } }] });
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}` });
    await sendMessage(session, 'post');
    await dispatchedCall('toolu_cancel_h');
    const result = await cli('cancel', session.workflowId);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe('turn 1 cancelled');
    expect(lines[1]).toMatch(/^turn 1 · step 1 · ✗ http_request TOOL_OUTCOME_UNKNOWN: TOOL_OUTCOME_UNKNOWN: the call toolu_cancel_h .* #toolu_cancel_h$/);
    await session.terminate('test cleanup');
  });

  it('says there is nothing to cancel when no turn runs, with exit code 0', async () => {
    const session = await startSession(h().client, h().env, { model: `anthropic:echo-${newModel('idle')}` });
    const human = await cli('cancel', session.workflowId);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout.trim()).toBe(`no turn of ${session.workflowId} is running: nothing to cancel`);
    const machine = await cli('cancel', session.workflowId, '--json');
    expect(json(machine.stdout)).toEqual({ workflowId: session.workflowId, cancelled: false, compensated: [] });
    await session.terminate('test cleanup');
  });
});

describe('npm run client -- retry-policy', () => {
  it('off takes effect on a call that is already retrying: its next failure is final', async () => {
    const model = newModel('off');
    h().llm.script(
      model,
      // The stated wait is the window in which the CLI (a process of its own) switches retries off.
      { kind: 'status', status: 529, headers: { 'retry-after': '8' } },
      { kind: 'status', status: 529 },
      { kind: 'text', text: 'never played' },
    );
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}` });
    const sent = await sendMessage(session, 'hello');
    await h().llm.waitForRequests(1, { model }, 45_000);

    const result = await cliProcess('retry-policy', session.workflowId, 'off');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(`retry policy of ${session.workflowId}: off (one attempt per LLM call)`);

    const outcome = await sent.outcome;
    expect(outcome).toMatchObject({ status: 'failed', failure: { type: 'overloaded', message: expect.stringContaining('retry_off') } });
    expect(h().llm.requests({ model })).toHaveLength(2);
    await session.terminate('test cleanup');
  });

  it('takes JSON naming only the fields to change, and default; --json prints the policy in force', async () => {
    const session = await startSession(h().client, h().env, { model: `anthropic:echo-${newModel('json')}` });
    const custom = await cli('retry-policy', session.workflowId, '{"maxRetries":2,"maxDelayMs":5000}', '--json');
    expect(custom.code, custom.stderr).toBe(0);
    expect(json(custom.stdout)).toEqual({ workflowId: session.workflowId, retryPolicy: { ...DEFAULT_RETRY_POLICY, maxRetries: 2, maxDelayMs: 5000 } });
    expect((await session.query(stateQuery)).retryPolicy).toEqual({ ...DEFAULT_RETRY_POLICY, maxRetries: 2, maxDelayMs: 5000 });

    const reset = await cli('retry-policy', session.workflowId, 'default', '--json');
    expect(json(reset.stdout)).toEqual({ workflowId: session.workflowId, retryPolicy: DEFAULT_RETRY_POLICY });
    expect((await session.query(stateQuery)).retryPolicy).toBe('default');
    await session.terminate('test cleanup');
  });

  it.each([
    ['{"maxRetries":50}', 'client: invalid retry policy: maxRetries: maxRetries must be at most 10'],
    ['{"maxRetry":3}', 'client: invalid retry policy: Unrecognized key: "maxRetry"'],
    ['sometimes', 'client: retry policy must be off, default or a JSON object, got "sometimes"'],
  ])('refuses %s in one line with exit code 2, before it reaches the session', async (policy, message) => {
    const session = await startSession(h().client, h().env, { model: `anthropic:echo-${newModel('bad')}` });
    const result = await cli('retry-policy', session.workflowId, policy);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([message]);
    expect((await session.query(stateQuery)).retryPolicy).toBe('default');
    await session.terminate('test cleanup');
  });
});
