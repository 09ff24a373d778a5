import type { SSEStreamingApi } from 'hono/streaming';
import { readSessionLog } from '../../client/log-chain';
import type { SessionEvent } from '../../contracts/session-log';
import type { GatewayContext } from '../context';
import { GatewayError, toGatewayError } from '../errors';
import { KEEPALIVE_MS } from '../routes/events';
import type { FeedItem } from '../session-feed';
import type { OpenedTurn } from './open-turn';
import { responseIdOf } from './response-id';
import type { ResponseObject } from './schemas';
import { TurnResponse, type ResponseMeta, type SequencedEvent } from './turn-response';

/**
 * What is kept of the feed while the turn's number is not known yet (its `turn/start` has
 * not come): a turn queued behind a long one may wait that long, and a bound keeps a
 * stream from holding a busy session's whole traffic.
 */
const MAX_EARLY_ITEMS = 10_000;

function metaOf(turn: OpenedTurn, number: number): ResponseMeta {
  const id = responseIdOf({ sessionId: turn.sessionId, turn: number });
  return { id, model: turn.model, itemPrefix: id.replace(/^resp_/, ''), previousResponseId: turn.previousResponseId, createdAt: turn.createdAt };
}

const ofTurn = (event: SessionEvent, number: number) => 'turn' in event && event.turn === number;

/** `stream: false`: the Response once the turn has ended, built from its events in the log. */
export async function readTurnResponse(ctx: GatewayContext, turn: OpenedTurn): Promise<ResponseObject> {
  const result = await turn.outcome;
  const number = result.turn ?? turn.turn;
  if (number === undefined) throw new GatewayError('internal', 'the session did not say which turn the message was');
  const response = new TurnResponse(metaOf(turn, number));
  const events = await readSessionLog(ctx.client.workflow, turn.sessionId, { fromSeq: turn.afterSeq + 1 });
  for (const event of events) if (ofTurn(event, number) && response.log(event)) break;
  return response.snapshot();
}

/**
 * `stream: true`: the turn's events as the Responses API streams them, from the session's
 * feed: its text as the live stream brings it, its log events (tool calls, each step's
 * final text, the end) from the log. It ends with the turn, or when the client leaves;
 * the turn goes on either way, as the session is durable.
 */
export async function streamTurnResponse(ctx: GatewayContext, turn: OpenedTurn, stream: SSEStreamingApi): Promise<void> {
  // One write at a time, in order: the feed delivers synchronously, the socket drains when it can.
  let writing: Promise<unknown> = Promise.resolve();
  const write = (text: string) => {
    writing = writing.then(() => stream.write(text)).catch(() => undefined);
  };
  const emit = (event: SequencedEvent) => write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);

  let over = false;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const finish = () => {
    over = true;
    resolveDone();
  };
  let response: TurnResponse | undefined;
  let number: number | undefined;
  const early: FeedItem[] = [];

  const deliver = (item: FeedItem) => {
    if (!response || number === undefined) return;
    if (item.type === 'delta') {
      if (item.frame.turn === number) response.delta(item.frame);
    } else if (item.type === 'log' && ofTurn(item.event, number) && response.log(item.event)) finish();
  };
  const begin = (found: number) => {
    if (over) return;
    number = found;
    response = new TurnResponse(metaOf(turn, found), emit);
    response.start();
    for (const item of early.splice(0)) deliver(item);
  };
  const onItem = (item: FeedItem) => {
    if (response) return deliver(item);
    if (item.type === 'log' && item.event.type === 'turn/start' && item.event.turn >= turn.fromTurn && item.event.text === turn.text) {
      begin(item.event.turn);
      return;
    }
    if (item.type !== 'progress' && early.length < MAX_EARLY_ITEMS) early.push(item);
  };
  const fail = (error: unknown) => {
    if (over) return;
    const answered = toGatewayError(error, ctx.env.connection.namespace);
    // The stream's `error` event: an OpenAI SDK raises it as an APIError with this message.
    if (response) response.fail(answered.type, answered.message);
    else emit({ type: 'error', code: answered.type, message: answered.message, param: null, sequence_number: 0 });
    finish();
  };

  const leaving = new AbortController();
  stream.onAbort(() => {
    leaving.abort();
    finish();
  });
  if (turn.turn !== undefined) begin(turn.turn);
  // The Update's outcome names the turn for certain: a turn the feed did not recognise by its text is taken from it.
  turn.outcome.then((result) => {
    if (!response && result.turn !== undefined) begin(result.turn);
  }, fail);
  const keepalive = setInterval(() => write(': keepalive\n\n'), KEEPALIVE_MS);
  let unfollow: (() => void) | undefined;
  try {
    unfollow = await ctx.feeds.follow(turn.sessionId, { afterSeq: turn.afterSeq, signal: leaving.signal, onItem });
    await done;
  } catch (error) {
    fail(error);
  } finally {
    clearInterval(keepalive);
    unfollow?.();
    await writing;
  }
}
