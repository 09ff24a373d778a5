import { WorkflowUpdateStage } from '@temporalio/client';
import type { z } from 'zod';
import { awaitTurnUpdate, cancelTurnUpdate, sendUpdate } from '../contracts/api';
import type { Message } from '../contracts/messages';
import type { SessionEvent } from '../contracts/session-log';
import { readableConversation } from './output';
import { messageOf, typedOutput, type MessageOptions } from './message-output';
import { turnOutcomeOf, type SessionHandle, type TurnResult } from './sessions';

export interface SentMessage<O = unknown> {
  /** The `send` Update's id: `getUpdateHandle(updateId)` reaches its outcome later. */
  updateId: string;
  /** Settles when the turn ends; a failed or cancelled turn resolves, it does not reject. */
  outcome: Promise<TurnResult<O>>;
}

/**
 * Sends a user message and returns as soon as the session has accepted it (the turn is
 * queued, durably), without waiting for the turn. A rejection by the session (it is
 * ending, the text is empty) throws here. `options` as for sendAndWait: the message's
 * output schema, and what types the outcome's `output`.
 */
export async function sendMessage<S extends z.ZodType = z.ZodType>(handle: SessionHandle, text: string, options: MessageOptions<S> = {}): Promise<SentMessage<z.output<S>>> {
  const message = messageOf(text, options);
  const update = await handle.startUpdate(sendUpdate, { args: [message], waitForStage: WorkflowUpdateStage.ACCEPTED });
  const outcome = update.result().then(
    (o): TurnResult<z.output<S>> => {
      const output = typedOutput(options, o.output);
      return { status: o.status, turn: o.turn, ...(o.reason ? { reason: o.reason } : {}), ...(output === undefined ? {} : { output }) };
    },
    (error: unknown) => {
      const failed = turnOutcomeOf(error);
      if (failed) return failed;
      throw error;
    },
  );
  // Callers that only send never look at the outcome; an unobserved rejection must not crash them.
  outcome.catch(() => undefined);
  return { updateId: update.updateId, outcome };
}

export interface CancelResult {
  /** False when no turn was running: there was nothing to cancel. */
  cancelled: boolean;
  turn?: number;
  /** How the cancelled turn ended, once its compensation has been recorded. */
  outcome?: TurnResult;
}

/**
 * Cancels the running turn: the abort path. Nothing of it is retried; its tool calls get
 * their compensation results (TOOL_OUTCOME_UNKNOWN, TOOL_NOT_STARTED) before the turn
 * closes, and this resolves only then, so the caller can read them in the log.
 */
export async function cancelTurn(handle: SessionHandle): Promise<CancelResult> {
  const { cancelled, turn } = await handle.executeUpdate(cancelTurnUpdate);
  if (!cancelled || turn === undefined) return { cancelled: false };
  const outcome = await handle.executeUpdate(awaitTurnUpdate, { args: [{ turn }] }).then(
    (o): TurnResult => ({ status: o.status, turn: o.turn }),
    (error: unknown) => {
      const failed = turnOutcomeOf(error);
      if (failed) return failed;
      throw error;
    },
  );
  return { cancelled: true, turn, outcome };
}

/** The conversation of one turn: its user message, the assistant's messages and the tool results. */
export function turnMessages(events: readonly SessionEvent[], turn: number): Message[] {
  return readableConversation(events.filter((e) => 'turn' in e && e.turn === turn));
}
