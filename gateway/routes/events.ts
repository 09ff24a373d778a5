import { createRoute, z } from '@hono/zod-openapi';
import { streamSSE, type SSEMessage, type SSEStreamingApi } from 'hono/streaming';
import type { RouteModule } from '../context';
import { ErrorBodySchema, toGatewayError } from '../errors';
import { ViewerQueue } from '../feed/viewer-queue';
import type { FeedItem } from '../session-feed';

/** A comment line this often keeps proxies and browsers from closing a quiet stream. */
export const KEEPALIVE_MS = 15_000;
/** What may wait for one slow viewer before it is let go (mostly deltas, a few dozen bytes each). */
export const VIEWER_QUEUE_ITEMS = 2_000;

/** A log seq to resume after: `-1` (before the first event) or a non-negative integer. */
const SeqSchema = z
  .string()
  .regex(/^(-1|0|[1-9][0-9]{0,15})$/, 'must be a log seq: an integer, -1 for before the first event')
  .openapi({ example: '41' });

const route = createRoute({
  method: 'get',
  path: '/v1/sessions/{id}/events',
  tags: ['sessions'],
  summary: "A session's events as Server-Sent Events: its log, durable and resumable, and the model's text and progress, live",
  description: [
    '`event: log` carries one SessionEvent with `id: <seq>`; a reconnect sends `Last-Event-ID` (or `?after=<seq>`) and gets every event after it, read from the log.',
    '`event: delta` ({turn, step, attempt, channel, offset, text}) and `event: progress` (a ProgressFrame) have no id and are best effort.',
    'A `: keepalive` comment comes every 15 s; `event: closed` ({reason}) says why the gateway ended the stream (a slow viewer, a shutdown).',
  ].join(' '),
  security: [{ bearer: [] }],
  request: {
    params: z.object({ id: z.string().min(1) }),
    query: z.object({ after: SeqSchema.optional() }),
    headers: z.object({ 'last-event-id': SeqSchema.optional() }),
  },
  responses: {
    200: { description: 'The stream (text/event-stream), until the viewer leaves', content: { 'text/event-stream': { schema: z.string() } } },
    400: { description: 'A bad `after` or `Last-Event-ID`', content: { 'application/json': { schema: ErrorBodySchema } } },
    401: { description: 'No bearer key, or not a valid one', content: { 'application/json': { schema: ErrorBodySchema } } },
    403: { description: "The key may not use this session's agent", content: { 'application/json': { schema: ErrorBodySchema } } },
    404: { description: 'No such session', content: { 'application/json': { schema: ErrorBodySchema } } },
  },
});

export interface EventRouteOptions {
  /** Default {@link KEEPALIVE_MS}. */
  keepaliveMs?: number;
  /** Default {@link VIEWER_QUEUE_ITEMS}. */
  maxQueuedItems?: number;
}

/**
 * `GET /v1/sessions/{id}/events`. The stream is one viewer of the session's shared
 * follower (gateway/session-feed.ts), with a bounded queue of its own between them; when
 * the viewer goes, it leaves the follower, which closes with its last viewer.
 */
export function eventRoutesWith(options: EventRouteOptions = {}): RouteModule {
  const keepaliveMs = options.keepaliveMs ?? KEEPALIVE_MS;
  const maxQueuedItems = options.maxQueuedItems ?? VIEWER_QUEUE_ITEMS;
  return (app, ctx) => {
    app.openapi(route, async (c) => {
      const { id } = c.req.valid('param');
      // A browser reconnecting sends the last id it saw, newer than the `after` in the URL it opened.
      const after = c.req.valid('header')['last-event-id'] ?? c.req.valid('query').after;
      await ctx.authorizeSession(c.get('key'), id);
      return streamSSE(c, async (stream) => {
        const queue = new ViewerQueue<FeedItem>(maxQueuedItems);
        const left = new AbortController();
        stream.onAbort(() => {
          queue.close('the viewer left');
          left.abort();
        });
        const keepalive = setInterval(() => void stream.write(': keepalive\n\n'), keepaliveMs);
        let unfollow: (() => void) | undefined;
        try {
          unfollow = await ctx.feeds.follow(id, {
            afterSeq: after === undefined ? -1 : Number(after),
            signal: left.signal,
            onItem: (item) => queue.push(item),
            onClose: (reason) => queue.close(reason),
          });
          for (let item = await queue.next(); item !== undefined; item = await queue.next()) await stream.writeSSE(messageOf(item));
          if (!stream.aborted) await stream.writeSSE({ event: 'closed', data: JSON.stringify({ reason: queue.closedWith }) });
        } catch (error) {
          const refusal = toGatewayError(error, ctx.client.options.namespace);
          if (refusal.type === 'internal') console.error(`gateway: the event stream of session ${id} failed: ${error instanceof Error ? error.message : String(error)}`);
          await writeError(stream, refusal);
        } finally {
          clearInterval(keepalive);
          unfollow?.();
          left.abort();
        }
      });
    });
  };
}

export const eventRoutes: RouteModule = eventRoutesWith();

function messageOf(item: FeedItem): SSEMessage {
  switch (item.type) {
    case 'log':
      return { event: 'log', id: String(item.event.seq), data: JSON.stringify(item.event) };
    case 'delta': {
      const { turn, step, attempt, channel, offset, text } = item.frame;
      return { event: 'delta', data: JSON.stringify({ turn, step, attempt, channel, offset, text }) };
    }
    case 'progress':
      return { event: 'progress', data: JSON.stringify(item.frame) };
  }
}

/** Once the stream has begun its status is sent: a failure is its last event, in the gateway's error body. */
async function writeError(stream: SSEStreamingApi, error: ReturnType<typeof toGatewayError>): Promise<void> {
  if (stream.aborted) return;
  await stream.writeSSE({ event: 'error', data: JSON.stringify({ error: { type: error.type, message: error.message } }) });
}
