/**
 * The tool scheduler as a unit: every dispatch and approval is a deferred the test
 * settles by hand, so "B starts only after A settled" is checked as an order of events,
 * never as an overlap of wall-clock time through a worker.
 * Cancellation is a flag the test flips, read through the scheduler's `isCancelled` hook.
 */
import { CancelledFailure } from '@temporalio/workflow';
import { describe, expect, it } from 'vitest';
import type { ToolCall } from '../contracts/messages';
import { runToolCalls, type ScheduledCall, type SchedulerHooks } from '../workflows/scheduler';
import type { ToolClass } from '../contracts/tools/tool-definition';
import type { ToolOutcome } from '../contracts/tools/tool-outcome';

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}
function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every promise continuation already queued run: the scheduler goes as far as it can. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

const OK: ToolOutcome = { code: 'ok', content: 'done' };
const call = (id: string): ToolCall => ({ id, name: `tool-${id}`, input: {} });
const readOnly = (id: string): ScheduledCall => ({ kind: 'dispatch', call: call(id), toolClass: 'read_only', needsApproval: false });
const sideEffecting = (id: string, needsApproval = false): ScheduledCall => ({ kind: 'dispatch', call: call(id), toolClass: 'side_effecting', needsApproval });
const answered = (id: string, outcome: ToolOutcome): ScheduledCall => ({ kind: 'answer', call: call(id), outcome });

/** Hooks whose dispatches and approvals wait for the test, and a trace of what happened in which order. */
function controlledHooks(concurrency: number) {
  const trace: string[] = [];
  const dispatches = new Map<string, Deferred<ToolOutcome>>();
  const approvals = new Map<string, Deferred<ToolOutcome | undefined>>();
  let cancelled = false;
  const hooks: SchedulerHooks = {
    concurrency,
    isCancelled: () => cancelled,
    recordCall: (c) => trace.push(`call ${c.id}`),
    recordResult: (c, outcome) => trace.push(`result ${c.id} ${outcome.code}: ${outcome.content}`),
    dispatch: (c: ToolCall, toolClass: ToolClass) => {
      trace.push(`dispatch ${c.id} ${toolClass}`);
      const d = deferred<ToolOutcome>();
      dispatches.set(c.id, d);
      return d.promise;
    },
    awaitApproval: (c) => {
      trace.push(`approval asked ${c.id}`);
      const d = deferred<ToolOutcome | undefined>();
      approvals.set(c.id, d);
      return d.promise;
    },
  };
  const dispatchOf = (id: string) => {
    const d = dispatches.get(id);
    if (!d) throw new Error(`${id} was never dispatched`);
    return d;
  };
  const approvalOf = (id: string) => {
    const d = approvals.get(id);
    if (!d) throw new Error(`no approval was asked for ${id}`);
    return d;
  };
  const cancel = () => {
    cancelled = true;
  };
  return { hooks, trace, dispatchOf, approvalOf, cancel, dispatched: () => [...dispatches.keys()] };
}

/** The scheduler's promise, observed without letting its rejection go unhandled. */
function run(calls: ScheduledCall[], hooks: SchedulerHooks) {
  let outcome: { error?: unknown } | undefined;
  const done = runToolCalls(calls, hooks).then(
    () => (outcome = {}),
    (error: unknown) => (outcome = { error }),
  );
  return { done, outcome: () => outcome };
}

describe('the tool scheduler', () => {
  it('runs read-only calls at once up to the concurrency, and starts the next when a slot frees', async () => {
    const s = controlledHooks(2);
    const r = run([readOnly('a'), readOnly('b'), readOnly('c')], s.hooks);
    await settle();
    expect(s.dispatched()).toEqual(['a', 'b']);

    s.dispatchOf('b').resolve(OK);
    await settle();
    expect(s.dispatched()).toEqual(['a', 'b', 'c']);
    expect(r.outcome()).toBeUndefined();

    s.dispatchOf('a').resolve(OK);
    s.dispatchOf('c').resolve(OK);
    await r.done;
    expect(r.outcome()).toEqual({});
    expect(s.trace).toEqual(['call a', 'dispatch a read_only', 'call b', 'dispatch b read_only', 'result b ok: done', 'call c', 'dispatch c read_only', 'result a ok: done', 'result c ok: done']);
  });

  it('runs a side-effecting call alone: after every earlier call settled, and before any later one starts', async () => {
    const s = controlledHooks(4);
    const r = run([readOnly('a'), sideEffecting('b'), readOnly('c')], s.hooks);
    await settle();
    expect(s.dispatched()).toEqual(['a']);

    s.dispatchOf('a').resolve(OK);
    await settle();
    expect(s.dispatched()).toEqual(['a', 'b']);

    s.dispatchOf('b').resolve(OK);
    await settle();
    expect(s.dispatched()).toEqual(['a', 'b', 'c']);

    s.dispatchOf('c').resolve(OK);
    await r.done;
    expect(s.trace).toEqual(['call a', 'dispatch a read_only', 'result a ok: done', 'call b', 'dispatch b side_effecting', 'result b ok: done', 'call c', 'dispatch c read_only', 'result c ok: done']);
  });

  it('asks approval only once earlier calls settled, dispatches on approval, and records a refusal without dispatching', async () => {
    const s = controlledHooks(4);
    const r = run([readOnly('a'), sideEffecting('b', true), sideEffecting('c', true)], s.hooks);
    await settle();
    expect(s.trace).toEqual(['call a', 'dispatch a read_only']);

    s.dispatchOf('a').resolve(OK);
    await settle();
    expect(s.trace.at(-1)).toBe('approval asked b');

    s.approvalOf('b').resolve(undefined);
    await settle();
    expect(s.dispatched()).toEqual(['a', 'b']);

    s.dispatchOf('b').resolve(OK);
    await settle();
    s.approvalOf('c').resolve({ code: 'error', content: 'refused by the operator' });
    await r.done;
    expect(r.outcome()).toEqual({});
    expect(s.dispatched()).toEqual(['a', 'b']);
    expect(s.trace.slice(-2)).toEqual(['approval asked c', 'result c error: refused by the operator']);
  });

  it('records answered calls in call order without dispatching them', async () => {
    const s = controlledHooks(4);
    const r = run([answered('a', { code: 'error', content: 'unknown tool' }), readOnly('b'), answered('c', OK)], s.hooks);
    await settle();
    expect(s.trace).toEqual(['result a error: unknown tool', 'call b', 'dispatch b read_only', 'result c ok: done']);
    s.dispatchOf('b').resolve(OK);
    await r.done;
    expect(s.dispatched()).toEqual(['b']);
  });

  it('after a failed call starts nothing new, waits for the calls still running, and only then rejects with that failure', async () => {
    const s = controlledHooks(2);
    const r = run([readOnly('a'), readOnly('b'), readOnly('c')], s.hooks);
    await settle();
    s.dispatchOf('a').reject(new Error('activity a failed'));
    await settle();
    expect(s.dispatched()).toEqual(['a', 'b']);
    expect(r.outcome()).toBeUndefined();

    s.dispatchOf('b').resolve(OK);
    await r.done;
    expect((r.outcome()?.error as Error).message).toBe('activity a failed');
    expect(s.trace).toEqual(['call a', 'dispatch a read_only', 'call b', 'dispatch b read_only', 'result b ok: done']);
  });

  it('once the turn is cancelled starts nothing new, waits for the running call, and rejects with a cancellation', async () => {
    const s = controlledHooks(1);
    const r = run([readOnly('a'), readOnly('b')], s.hooks);
    await settle();
    expect(s.dispatched()).toEqual(['a']);

    s.cancel();
    s.dispatchOf('a').resolve(OK);
    await r.done;
    expect(r.outcome()?.error).toBeInstanceOf(CancelledFailure);
    expect(s.dispatched()).toEqual(['a']);
    expect(s.trace).toEqual(['call a', 'dispatch a read_only', 'result a ok: done']);
  });

  it('dispatches nothing approved after the turn was cancelled while the approval was pending', async () => {
    const s = controlledHooks(1);
    const r = run([sideEffecting('a', true), readOnly('b')], s.hooks);
    await settle();
    s.cancel();
    s.approvalOf('a').resolve(undefined);
    await r.done;
    expect(r.outcome()?.error).toBeInstanceOf(CancelledFailure);
    expect(s.dispatched()).toEqual([]);
  });
});
