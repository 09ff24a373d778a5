import { stateQuery } from '../../contracts/api';
import { SendMessageSchema } from '../../contracts/api';
import { startSessionWithMessage, type SessionHandle, type TurnResult } from '../../client/sessions';
import { sendMessage } from '../../client/turn-control';
import type { agentSession } from '../../workflows/session';
import type { GatewayContext, GatewayKey } from '../context';
import { GatewayError } from '../errors';
import { inputText } from './input-text';
import { parseResponseId } from './response-id';
import type { ResponseCreate } from './schemas';

/** A turn a request asked for, accepted by its session: where to find it in the log, and how it ends. */
export interface OpenedTurn {
  sessionId: string;
  /** The agent's name, the response's `model`. */
  model: string;
  /** The message as the session records it in `turn/start`. */
  text: string;
  /** The turn's events have seqs above this one. */
  afterSeq: number;
  /**
   * The turn, when it is known at once (a new session's first is 1). Otherwise it is the
   * first `turn/start` of `text` from turn `fromTurn` on: the session numbers a message
   * only when it accepts it, and the Update says so only when the turn has ended.
   */
  turn?: number;
  fromTurn: number;
  /** Settles when the turn ends; a failed turn resolves. */
  outcome: Promise<TurnResult>;
  previousResponseId: string | null;
  /** Unix seconds. */
  createdAt: number;
}

/**
 * Starts the agent's session with the message (a request without `previous_response_id`)
 * or sends it to the session of that response, which this key must be allowed to use and
 * whose agent `model` must name.
 */
export async function openTurn(ctx: GatewayContext, key: GatewayKey, request: ResponseCreate): Promise<OpenedTurn> {
  const message = SendMessageSchema.safeParse({ text: inputText(request.input) });
  if (!message.success) throw new GatewayError('invalid_request', 'input: a message must not be empty', {}, 'input');
  const text = message.data.text;
  const createdAt = Math.floor(Date.now() / 1000);
  const previous = request.previous_response_id;
  if (!previous) {
    const started = await startSessionWithMessage(ctx.client, ctx.env, { agent: request.model }, text);
    ctx.rememberSession(started.handle.workflowId, request.model);
    const outcome = started.turn();
    outcome.catch(() => undefined);
    return { sessionId: started.handle.workflowId, model: request.model, text, afterSeq: -1, turn: 1, fromTurn: 1, outcome, previousResponseId: null, createdAt };
  }

  const { sessionId } = parseResponseId(previous, 'previous_response_id');
  await ctx.authorizeSession(key, sessionId);
  const agent = await ctx.sessionAgent(sessionId);
  if (agent !== null && agent !== request.model) throw new GatewayError('invalid_request', `model: the session of previous_response_id runs agent ${JSON.stringify(agent)}`, {}, 'model');
  const handle: SessionHandle = ctx.client.workflow.getHandle<typeof agentSession>(sessionId);
  // Read before sending: the new turn's events come after these, and its number after this turn.
  const state = await handle.query(stateQuery);
  const sent = await sendMessage(handle, text);
  return { sessionId, model: request.model, text, afterSeq: state.events - 1, fromTurn: state.turn + 1, outcome: sent.outcome, previousResponseId: previous, createdAt };
}
