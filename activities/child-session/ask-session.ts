import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { cancelTurnUpdate, endUpdate, logQuery, sendUpdate, TurnOutcomeSchema, type TurnOutcome } from '../../contracts/api';
import type { FailureType } from '../../contracts/failure-types';
import type { ChildSessionActivities, SessionAnswer } from '../../contracts/child-session';
import { readLogPages } from '../../contracts/log-pages';

/** Often enough that a cancelled parent's cancellation reaches a waiting call within seconds. */
const HEARTBEAT_MS = 5_000;

const SESSION_REFUSED = 'session_refused' satisfies FailureType;

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
        const sent = activity.client.withAbortSignal(activity.cancellationSignal, () => handle.executeUpdate(sendUpdate, { args: [{ text }], updateId }));
        const outcome = await sent.catch((error: unknown) => endedOutcome(error, workflowId));
        return { outcome, text: answerOf(await readLogPages((fromSeq) => handle.query(logQuery, { fromSeq })), outcome.turn) };
      } catch (error) {
        if (!activity.cancellationSignal.aborted) throw error;
        // The parent cancelled the call: so is the child's turn, which would otherwise run on
        // alone. A worker shutting down or a timed-out attempt leaves it running: the retried
        // attempt re-attaches to the same turn by its Update id.
        if (activity.cancellationDetails?.cancelRequested === true) await handle.executeUpdate(cancelTurnUpdate).catch(() => undefined);
        throw activity.cancellationSignal.reason;
      } finally {
        clearInterval(beat);
      }
    },
    async endSession({ workflowId }) {
      // A session that has ended already (by itself, idle) is what was asked for.
      await Context.current()
        .client.workflow.getHandle(workflowId)
        .executeUpdate(endUpdate)
        .catch((error: unknown) => {
          if (!(error instanceof WorkflowNotFoundError)) throw error;
        });
    },
  };
}

/**
 * A turn that failed or was cancelled fails the Update with its outcome as the failure's
 * details: that outcome is the answer. Any other failed Update was refused (its validator:
 * an empty or too long message, an ended session), and a session that does not exist stays
 * so: asked again with the same Update id they answer the same, so they are not retried.
 */
function endedOutcome(error: unknown, workflowId: string): TurnOutcome {
  if (error instanceof WorkflowUpdateFailedError) {
    const outcome = error.cause instanceof ApplicationFailure ? TurnOutcomeSchema.safeParse(error.cause.details?.[0]) : undefined;
    if (outcome?.success) return outcome.data;
    throw ApplicationFailure.create({ type: SESSION_REFUSED, message: `session ${workflowId} refused the message: ${firstLine(error.cause?.message ?? error.message)}`, nonRetryable: true });
  }
  if (error instanceof WorkflowNotFoundError) throw ApplicationFailure.create({ type: SESSION_REFUSED, message: `session ${workflowId} does not exist, or has ended`, nonRetryable: true });
  throw error;
}

const firstLine = (message: string) => message.split('\n')[0]?.slice(0, 500) ?? '';

/** The turn's last assistant text. */
function answerOf(events: Awaited<ReturnType<typeof readLogPages>>, turn: number): SessionAnswer['text'] {
  const answers = events.flatMap((event) => (event.type === 'assistant' && event.turn === turn ? [event.message.text] : []));
  return answers.at(-1) ?? '';
}
