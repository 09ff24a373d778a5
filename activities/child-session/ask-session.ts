import { Context } from '@temporalio/activity';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { endUpdate, logQuery, sendUpdate, TurnOutcomeSchema, type TurnOutcome } from '../../contracts/api';
import type { ChildSessionActivities, SessionAnswer } from '../../contracts/child-session';
import { readLogPages } from '../../contracts/log-pages';

/** Often enough that a cancelled parent's cancellation reaches a waiting call within seconds. */
const HEARTBEAT_MS = 5_000;

/**
 * A workflow cannot send an Update, so a parent reaches its child session through these,
 * with the worker's own client: a turn is the child's `send` Update, awaited while the
 * activity heartbeats, and its answer is read from the child's log.
 */
export function createChildSessionActivities(): ChildSessionActivities {
  return {
    async askSession({ workflowId, text, updateId }) {
      const activity = Context.current();
      const handle = activity.client.workflow.getHandle(workflowId);
      const beat = setInterval(() => activity.heartbeat(), HEARTBEAT_MS);
      try {
        const outcome = await handle.executeUpdate(sendUpdate, { args: [{ text }], updateId }).catch(endedOutcome);
        return { outcome, text: answerOf(await readLogPages((fromSeq) => handle.query(logQuery, { fromSeq })), outcome.turn) };
      } finally {
        clearInterval(beat);
      }
    },
    async endSession({ workflowId }) {
      await Context.current().client.workflow.getHandle(workflowId).executeUpdate(endUpdate);
    },
  };
}

/** A turn that failed or was cancelled fails the Update with its outcome as the failure's details: that outcome is the answer. */
function endedOutcome(error: unknown): TurnOutcome {
  const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
  const outcome = cause instanceof ApplicationFailure ? TurnOutcomeSchema.safeParse(cause.details?.[0]) : undefined;
  if (outcome?.success) return outcome.data;
  throw error;
}

/** The turn's last assistant text. */
function answerOf(events: Awaited<ReturnType<typeof readLogPages>>, turn: number): SessionAnswer['text'] {
  const answers = events.flatMap((event) => (event.type === 'assistant' && event.turn === turn ? [event.message.text] : []));
  return answers.at(-1) ?? '';
}
