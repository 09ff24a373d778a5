import { proxyActivities, startChild, uuid4, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import { SESSION_WORKFLOW, type SessionInput, type SessionResult } from '../contracts/api';
import type { ChildSessionActivities, SessionAnswer } from '../contracts/child-session';
import type { agentSession } from './session';

export type { SessionAnswer } from '../contracts/child-session';

export interface ChildSessionOptions {
  /** Default: the parent's id with `/agent-` and a random (replay-stable) suffix. */
  workflowId?: string;
  /** Default: the parent's task queue, where the plugin's worker runs the session. */
  taskQueue?: string;
  /** The longest one turn may take, its retries and the model's waits included. Default: one hour. */
  turnTimeout?: ActivityOptions['startToCloseTimeout'];
}

/** A session that a workflow of one's own started as its child. */
export interface ChildSession {
  readonly workflowId: string;
  /** Sends a message and resolves with the turn's outcome and answer; a failed or cancelled turn resolves too, with that outcome. */
  ask(text: string): Promise<SessionAnswer>;
  /** Ends the session and resolves with its result. */
  end(): Promise<SessionResult>;
}

/**
 * Starts an agent session as a child of the calling workflow (docs/plugin.md). Its turns
 * are the session's own: retried, compensated and recorded in its history, not the
 * parent's; the parent records one activity per message. The child is terminated if the
 * parent closes first (Temporal's default parent-close policy).
 */
export async function startChildSession(input: SessionInput, options: ChildSessionOptions = {}): Promise<ChildSession> {
  const workflowId = options.workflowId ?? `${workflowInfo().workflowId}/agent-${uuid4()}`;
  const child = await startChild<typeof agentSession>(SESSION_WORKFLOW, {
    args: [input],
    workflowId,
    ...(options.taskQueue === undefined ? {} : { taskQueue: options.taskQueue }),
  });
  const { askSession, endSession } = proxyActivities<ChildSessionActivities>({
    startToCloseTimeout: options.turnTimeout ?? '1 hour',
    heartbeatTimeout: '30 seconds',
    ...(options.taskQueue === undefined ? {} : { taskQueue: options.taskQueue }),
  });
  let asked = 0;
  return {
    workflowId,
    ask: (text) => askSession({ workflowId, text, updateId: `${workflowId}/ask-${++asked}` }),
    async end() {
      await endSession({ workflowId });
      return child.result();
    },
  };
}

/** One question to a new session, its answer, and the session ended: the whole exchange of a parent that needs one answer. */
export async function runAgentTurn(input: SessionInput, text: string, options: ChildSessionOptions = {}): Promise<SessionAnswer> {
  const session = await startChildSession(input, options);
  const answer = await session.ask(text);
  await session.end();
  return answer;
}
