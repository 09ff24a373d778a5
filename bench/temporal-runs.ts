import { startAttributePairs } from '../contracts/search-attributes';
import { SESSION_REVISION } from '../contracts/session-revision';
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { ScriptedLlm } from '../testing/scripted-llm/server';
import { SESSION_WORKFLOW, endUpdate, sendUpdate, type TurnOutcome } from '../contracts/api';
import { startSessionWithMessage } from '../client/sessions';
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
  const { model, workflowId } = scriptedSession(llm, steps, label);
  const handle = await client.workflow.start<typeof agentSession>(SESSION_WORKFLOW, { taskQueue, workflowId, args: [sessionInput(model, steps)], typedSearchAttributes: startAttributePairs(`anthropic:${model}`, 'idle') });
  return { handle, model };
}

/** A model name of its own, its turn scripted, and the session id the benchmark gives it. */
function scriptedSession(llm: ScriptedLlm, steps: number, label: string): { model: string; workflowId: string } {
  const model = uniqueModel(label);
  scriptTurn(llm, model, steps);
  return { model, workflowId: `bench-${model}` };
}

/** Sends the turn's message (the `send` Update) and waits for its outcome. */
export async function sendTurn({ handle, model }: StartedSession): Promise<SessionTurn> {
  const started = performance.now();
  const outcome = await handle.executeUpdate(sendUpdate, { args: [{ text: TURN_MESSAGE }] });
  const turnMs = performance.now() - started;
  answered(handle.workflowId, outcome);
  return { handle, runId: handle.firstExecutionRunId, model, turnMs };
}

const TURN_MESSAGE = 'Compute 6*7, 2^10 and sqrt(16).';

function sessionInput(model: string, steps: number) {
  // As this release's client starts a session: at its revision (and, above, with its search attributes).
  return { model: `anthropic:${model}`, maxSteps: steps, idleTimeoutMs: SESSION_IDLE_TIMEOUT_MS, revision: SESSION_REVISION.current };
}

/** A turn that does not end answered fails the benchmark: it would be measuring something else. */
function answered(workflowId: string, outcome: Pick<TurnOutcome, 'status' | 'reason' | 'failure'>): void {
  if (outcome.status !== 'completed' || outcome.reason !== 'answered') {
    throw new Error(`benchmark session ${workflowId}: the turn ended ${outcome.status}/${outcome.reason ?? outcome.failure?.type ?? '?'} instead of being answered`);
  }
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

/**
 * A whole session as `npm run client -- run` runs it: started with its message
 * (update-with-start), its turn, then `end`. `onStart` learns its workflow id first.
 */
export async function runWholeSession(client: Client, llm: ScriptedLlm, taskQueue: string, steps: number, onStart: (workflowId: string) => void = () => {}): Promise<string> {
  const { model, workflowId } = scriptedSession(llm, steps, 'load');
  onStart(workflowId);
  const { handle, turn } = await startSessionWithMessage(client, { AGENT_TASK_QUEUE: taskQueue }, { ...sessionInput(model, steps), workflowId }, TURN_MESSAGE);
  answered(handle.workflowId, await turn());
  await endSession(handle);
  return model;
}

/**
 * One run of the floor that does the agent's I/O (bench/floor/io-activities.ts), scripted as
 * the agent's turn is: its step start times are its requests in the LLM's log, as the agent's.
 */
export async function runIoFloor(client: Client, llm: ScriptedLlm, taskQueue: string, steps: number, onStart: (workflowId: string) => void = () => {}): Promise<{ workflowId: string; model: string; turnMs: number }> {
  const model = uniqueModel('io-floor');
  scriptTurn(llm, model, steps);
  const workflowId = `bench-${model}`;
  onStart(workflowId);
  const started = performance.now();
  await client.workflow.execute('ioFloorSession', { taskQueue, workflowId, args: [{ model, text: TURN_MESSAGE, steps }] });
  return { workflowId, model, turnMs: performance.now() - started };
}

/** One run of the floor workflow; its step start times are the worker's probes for the returned id. */
export async function runFloor(client: Client, taskQueue: string, steps: number, onStart: (workflowId: string) => void = () => {}): Promise<{ workflowId: string; turnMs: number }> {
  const workflowId = `bench-floor-${randomUUID()}`;
  onStart(workflowId);
  const started = performance.now();
  await client.workflow.execute('floorSession', { taskQueue, workflowId, args: [{ steps }] });
  return { workflowId, turnMs: performance.now() - started };
}
