import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { ScriptedLlm } from '../scripts/scripted-llm/server';
import { SESSION_WORKFLOW, endUpdate, sendUpdate } from '../contracts/api';
import type { agentSession } from '../workflows/session';
import { scriptTurn, uniqueModel } from './scripted-turn';

/** Long enough that no session ends by itself while the benchmark still needs it. */
const SESSION_IDLE_TIMEOUT_MS = 30 * 60_000;

export type SessionHandle = WorkflowHandleWithFirstExecutionRunId<typeof agentSession>;

export interface SessionTurn {
  handle: SessionHandle;
  /**
   * The run the turn ran in. A session may continue as new between turns, after which
   * the workflow id names a newer run; this turn's history stays in this one.
   */
  runId: string;
  /** The model name the turn was scripted for (its requests in the LLM's log). */
  model: string;
  /** From `send` to its outcome, as the client sees it. */
  turnMs: number;
}

/** A session started and scripted for one turn of `steps` steps, its message not sent yet. */
export interface StartedSession {
  handle: SessionHandle;
  model: string;
}

/** Starts a session through its public interface (contracts/api.ts) and scripts its one turn. */
export async function startSession(client: Client, llm: ScriptedLlm, taskQueue: string, steps: number, label = 'session'): Promise<StartedSession> {
  const model = uniqueModel(label);
  scriptTurn(llm, model, steps);
  const handle = await client.workflow.start<typeof agentSession>(SESSION_WORKFLOW, {
    taskQueue,
    workflowId: `bench-${model}`,
    args: [{ model: `anthropic:${model}`, maxSteps: steps, idleTimeoutMs: SESSION_IDLE_TIMEOUT_MS }],
  });
  return { handle, model };
}

/**
 * Sends the turn's message (the `send` Update) and waits for its outcome. A turn that
 * does not end answered fails the benchmark: it would be measuring something else.
 */
export async function sendTurn({ handle, model }: StartedSession): Promise<SessionTurn> {
  const started = performance.now();
  const outcome = await handle.executeUpdate(sendUpdate, { args: [{ text: 'Compute 6*7, 2^10 and sqrt(16).' }] });
  const turnMs = performance.now() - started;
  if (outcome.status !== 'completed' || outcome.reason !== 'answered') {
    throw new Error(`benchmark session ${handle.workflowId}: the turn ended ${outcome.status}/${outcome.reason ?? outcome.failure?.type ?? '?'} instead of being answered`);
  }
  return { handle, runId: handle.firstExecutionRunId, model, turnMs };
}

/**
 * One turn of `steps` steps on the real session workflow: start, `send`, its outcome.
 * The session is left open: history and memory measurements look at it before `end`.
 */
export async function runSessionTurn(client: Client, llm: ScriptedLlm, taskQueue: string, steps: number, label = 'session'): Promise<SessionTurn> {
  return sendTurn(await startSession(client, llm, taskQueue, steps, label));
}

/** Ends a session (the `end` Update); it closes once no turn runs. */
export async function endSession(handle: SessionHandle): Promise<void> {
  await handle.executeUpdate(endUpdate);
}

/** A whole session: one turn, then `end`, as the throughput benchmark runs them. `onStart` learns its workflow id first. */
export async function runWholeSession(client: Client, llm: ScriptedLlm, taskQueue: string, steps: number, onStart: (workflowId: string) => void = () => {}): Promise<string> {
  const session = await startSession(client, llm, taskQueue, steps, 'load');
  onStart(session.handle.workflowId);
  await sendTurn(session);
  await endSession(session.handle);
  return session.model;
}

/** One run of the floor workflow; its step start times are the worker's probes for the returned id. */
export async function runFloor(client: Client, taskQueue: string, steps: number, onStart: (workflowId: string) => void = () => {}): Promise<{ workflowId: string; turnMs: number }> {
  const workflowId = `bench-floor-${randomUUID()}`;
  onStart(workflowId);
  const started = performance.now();
  await client.workflow.execute('floorSession', { taskQueue, workflowId, args: [{ steps }] });
  return { workflowId, turnMs: performance.now() - started };
}
