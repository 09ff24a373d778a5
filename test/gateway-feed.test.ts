/**
 * The session feed's own logic (gateway/session-feed.ts, gateway/feed/): which log events a
 * viewer gets and when the log is read, with the log and the live stream as plain objects
 * and the poll's clock faked. test/gateway-events.test.ts proves the same on a real dev
 * server, worker and live stream.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Client } from '@temporalio/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LIVE_STREAM_VERSION, type DeltaFrame, type LiveStreamSubscriber, type SessionFrame } from '../contracts/live-stream';
import type { SessionEvent } from '../contracts/session-log';
import type { SessionLogSource } from '../gateway/feed/log-source';
import type { GatewayContext, GatewayVariables } from '../gateway/context';
import { ViewerQueue } from '../gateway/feed/viewer-queue';
import { eventRoutesWith, type EventRouteOptions } from '../gateway/routes/events';
import { createSessionFeeds, LOG_POLL_INTERVAL_MS, type FeedItem, type SessionFeeds } from '../gateway/session-feed';

const SESSION = 'session-feed-test';

/** Turn `turn`'s events: turn/start at `first`, then `count - 1` more, the last a turn/end when `ended`. */
function turnEvents(turn: number, first: number, count: number, ended = false): SessionEvent[] {
  return Array.from({ length: count }, (_, i): SessionEvent => {
    const seq = first + i;
    if (i === 0) return { type: 'turn/start', seq, at: seq, turn, text: `message ${turn}` };
    if (ended && i === count - 1) return { type: 'turn/end', seq, at: seq, turn, status: 'completed', reason: 'answered' };
    return { type: 'step/start', seq, at: seq, turn, step: i, model: 'anthropic:test' };
  });
}

/** A session's log as Temporal would answer it, counting the reads. */
class FakeLog implements SessionLogSource {
  events: SessionEvent[] = [];
  reads: { kind: 'read' | 'readNew'; fromSeq: number }[] = [];
  /** While set, reads wait for it: a read in flight. */
  hold: Promise<void> | undefined;

  async read(_sessionId: string, fromSeq: number) {
    this.reads.push({ kind: 'read', fromSeq });
    await this.hold;
    return { events: this.events.filter((e) => e.seq >= fromSeq), nextSeq: (this.events.at(-1)?.seq ?? -1) + 1 };
  }
  async readNew(_sessionId: string, fromSeq: number) {
    this.reads.push({ kind: 'readNew', fromSeq });
    await this.hold;
    return this.events.filter((e) => e.seq >= fromSeq);
  }
}

/** The live stream as the feed sees it: frames, resyncs and the connection, sent by the test. */
class FakeSubscriber implements LiveStreamSubscriber {
  connected = true;
  readonly subscribers = new Map<string, Set<(frame: SessionFrame) => void>>();
  readonly #resync = new Set<() => void>();
  readonly #connection = new Set<(connected: boolean) => void>();

  subscribe(sessionId: string, onFrame: (frame: SessionFrame) => void) {
    const set = this.subscribers.get(sessionId) ?? new Set();
    set.add(onFrame);
    this.subscribers.set(sessionId, set);
    return () => set.delete(onFrame);
  }
  onResync(listener: () => void) {
    this.#resync.add(listener);
    return () => this.#resync.delete(listener);
  }
  onConnectionChange(listener: (connected: boolean) => void) {
    this.#connection.add(listener);
    return () => this.#connection.delete(listener);
  }
  async close() {}

  send(frame: SessionFrame) {
    for (const onFrame of this.subscribers.get(frame.sessionId) ?? []) onFrame(frame);
  }
  log(events: SessionEvent[]) {
    this.send({ kind: 'log', v: LIVE_STREAM_VERSION, sessionId: SESSION, events });
  }
  resync() {
    for (const listener of this.#resync) listener();
  }
  setConnected(connected: boolean) {
    this.connected = connected;
    for (const listener of this.#connection) listener(connected);
  }
}

const delta = (turn: number, text: string): DeltaFrame => ({ kind: 'delta', v: LIVE_STREAM_VERSION, sessionId: SESSION, turn, step: 1, attempt: 1, channel: 'text', offset: 0, text });

/** A viewer that keeps what it got. */
function viewer() {
  const items: FeedItem[] = [];
  return { items, onItem: (item: FeedItem) => items.push(item), seqs: () => items.flatMap((i) => (i.type === 'log' ? [i.event.seq] : [])) };
}

/** Lets the feed's awaited reads (resolved promises) run. */
const settle = () => vi.advanceTimersByTimeAsync(0);

let log: FakeLog;
let subscriber: FakeSubscriber;
let feeds: SessionFeeds;
const client = {} as Client;

beforeEach(() => {
  vi.useFakeTimers();
  log = new FakeLog();
  subscriber = new FakeSubscriber();
});

afterEach(async () => {
  await feeds?.close();
  vi.useRealTimers();
});

const liveFeeds = () => (feeds = createSessionFeeds({ client, subscriber, source: log, onReadError: () => undefined }));
const pollingFeeds = () => (feeds = createSessionFeeds({ client, subscriber: undefined, source: log, onReadError: () => undefined }));

describe('a session feed', () => {
  it('gives a viewer the log after its Last-Event-ID, then the live log frames that continue it', async () => {
    log.events = turnEvents(1, 0, 4);
    liveFeeds();
    const v = viewer();
    await feeds.follow(SESSION, { afterSeq: 1, onItem: v.onItem });
    expect(v.seqs()).toEqual([2, 3]);
    subscriber.log(turnEvents(1, 4, 2).map((e, i) => ({ ...e, seq: 4 + i })));
    expect(v.seqs()).toEqual([2, 3, 4, 5]);
    expect(log.reads).toEqual([{ kind: 'read', fromSeq: 2 }]);
  });

  it('delivers each log event once: a frame repeated, or repeating what a read gave, is dropped', async () => {
    log.events = turnEvents(1, 0, 3);
    liveFeeds();
    const v = viewer();
    await feeds.follow(SESSION, { onItem: v.onItem });
    subscriber.log(log.events.slice(1));
    const next = turnEvents(1, 3, 2).map((e, i) => ({ ...e, seq: 3 + i }));
    subscriber.log(next);
    subscriber.log(next);
    expect(v.seqs()).toEqual([0, 1, 2, 3, 4]);
  });

  it('reads the missing range from the log when a frame starts past the next seq, and delivers in order', async () => {
    liveFeeds();
    const v = viewer();
    await feeds.follow(SESSION, { onItem: v.onItem });
    log.events = turnEvents(1, 0, 6);
    subscriber.log(log.events.slice(0, 2));
    // Seqs 2 and 3 were lost on the way.
    subscriber.log(log.events.slice(4));
    expect(v.seqs()).toEqual([0, 1]);
    await settle();
    expect(v.seqs()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(log.reads.at(-1)).toEqual({ kind: 'readNew', fromSeq: 2 });
  });

  it('reads from the last delivered seq when the live stream says frames may be lost, and when it reconnects', async () => {
    log.events = turnEvents(1, 0, 2);
    liveFeeds();
    const v = viewer();
    await feeds.follow(SESSION, { onItem: v.onItem });
    log.events = turnEvents(1, 0, 4);
    subscriber.resync();
    await settle();
    expect(v.seqs()).toEqual([0, 1, 2, 3]);
    expect(log.reads.at(-1)).toEqual({ kind: 'readNew', fromSeq: 2 });
    subscriber.setConnected(false);
    log.events = turnEvents(1, 0, 5);
    subscriber.setConnected(true);
    await settle();
    expect(v.seqs()).toEqual([0, 1, 2, 3, 4]);
    expect(log.reads.at(-1)).toEqual({ kind: 'readNew', fromSeq: 4 });
  });

  it('serves viewers of a followed session from one follower: one read and one subscription for ten', async () => {
    log.events = turnEvents(1, 0, 3);
    liveFeeds();
    const viewers = Array.from({ length: 10 }, viewer);
    await Promise.all(viewers.map((v) => feeds.follow(SESSION, { onItem: v.onItem })));
    subscriber.log(turnEvents(1, 3, 1).map((e) => ({ ...e, seq: 3 })));
    for (const v of viewers) expect(v.seqs()).toEqual([0, 1, 2, 3]);
    expect(log.reads).toHaveLength(1);
    expect(subscriber.subscribers.get(SESSION)?.size).toBe(1);
    expect(feeds.following).toBe(1);
  });

  it('closes the follower and its subscription when the last viewer leaves, by its unfollow or its signal', async () => {
    log.events = turnEvents(1, 0, 2);
    liveFeeds();
    const left = new AbortController();
    const unfollow = await feeds.follow(SESSION, { onItem: () => undefined });
    await feeds.follow(SESSION, { onItem: () => undefined, signal: left.signal });
    unfollow();
    expect(feeds.following).toBe(1);
    left.abort();
    expect(feeds.following).toBe(0);
    expect(subscriber.subscribers.get(SESSION)?.size).toBe(0);
  });

  it('closes the follower of a viewer that left while its catch-up was being read', async () => {
    log.events = turnEvents(1, 0, 2);
    let release!: () => void;
    log.hold = new Promise((resolve) => (release = resolve));
    liveFeeds();
    const left = new AbortController();
    const following = feeds.follow(SESSION, { onItem: () => undefined, signal: left.signal });
    left.abort();
    release();
    await following;
    expect(feeds.following).toBe(0);
  });

  it("gives a viewer the deltas and progress of the turn in progress, and drops a late delta of a turn the log has ended", async () => {
    log.events = turnEvents(1, 0, 3, true);
    liveFeeds();
    const v = viewer();
    await feeds.follow(SESSION, { onItem: v.onItem });
    subscriber.send(delta(1, 'late'));
    subscriber.log(turnEvents(2, 3, 1));
    subscriber.send(delta(2, 'live'));
    subscriber.send({ kind: 'progress', v: LIVE_STREAM_VERSION, sessionId: SESSION, turn: 2, step: 1, state: 'llm_started', line: 'calling the model' });
    expect(v.items.filter((i) => i.type !== 'log')).toEqual([
      { type: 'delta', frame: delta(2, 'live') },
      { type: 'progress', frame: expect.objectContaining({ state: 'llm_started' }) },
    ]);
  });

  it('gives a viewer the deltas that came while its catch-up was read, after the log it caught up on', async () => {
    log.events = turnEvents(1, 0, 2);
    let release!: () => void;
    log.hold = new Promise((resolve) => (release = resolve));
    liveFeeds();
    const v = viewer();
    const following = feeds.follow(SESSION, { onItem: v.onItem });
    subscriber.send(delta(1, 'early'));
    release();
    await following;
    expect(v.items.map((i) => i.type)).toEqual(['log', 'log', 'delta']);
  });

  it('starts a viewer whose Last-Event-ID is past the log at its end, without spoiling it for the next viewer', async () => {
    log.events = turnEvents(1, 0, 3);
    liveFeeds();
    const ahead = viewer();
    await feeds.follow(SESSION, { afterSeq: 99, onItem: ahead.onItem });
    const fromStart = viewer();
    await feeds.follow(SESSION, { onItem: fromStart.onItem });
    subscriber.log(turnEvents(1, 3, 1).map((e) => ({ ...e, seq: 3 })));
    expect(ahead.seqs()).toEqual([3]);
    expect(fromStart.seqs()).toEqual([0, 1, 2, 3]);
  });

  it('follows a log that starts after seq 0, as a fork does', async () => {
    log.events = turnEvents(2, 10, 3);
    liveFeeds();
    const v = viewer();
    await feeds.follow(SESSION, { onItem: v.onItem });
    subscriber.log(turnEvents(2, 13, 1).map((e) => ({ ...e, seq: 13 })));
    expect(v.seqs()).toEqual([10, 11, 12, 13]);
  });
});

describe('a session feed without the live stream', () => {
  it(`reads what is new every ${LOG_POLL_INTERVAL_MS / 1000} s, once per session however many view it`, async () => {
    log.events = turnEvents(1, 0, 2);
    pollingFeeds();
    const viewers = Array.from({ length: 10 }, viewer);
    for (const v of viewers) await feeds.follow(SESSION, { onItem: v.onItem });
    expect(log.reads).toHaveLength(1);
    log.events = turnEvents(1, 0, 3);
    await vi.advanceTimersByTimeAsync(LOG_POLL_INTERVAL_MS - 1);
    expect(log.reads).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(log.reads).toEqual([{ kind: 'read', fromSeq: 0 }, { kind: 'readNew', fromSeq: 2 }]);
    for (const v of viewers) expect(v.seqs()).toEqual([0, 1, 2]);
    await vi.advanceTimersByTimeAsync(3 * LOG_POLL_INTERVAL_MS);
    expect(log.reads).toHaveLength(5);
  });

  it('polls while the live stream is down and stops when it is back', async () => {
    log.events = turnEvents(1, 0, 1);
    liveFeeds();
    await feeds.follow(SESSION, { onItem: () => undefined });
    await vi.advanceTimersByTimeAsync(3 * LOG_POLL_INTERVAL_MS);
    expect(log.reads).toHaveLength(1);
    subscriber.setConnected(false);
    await vi.advanceTimersByTimeAsync(2 * LOG_POLL_INTERVAL_MS);
    expect(log.reads).toHaveLength(3);
    subscriber.setConnected(true);
    await vi.advanceTimersByTimeAsync(3 * LOG_POLL_INTERVAL_MS);
    // One more: the read on reconnecting.
    expect(log.reads).toHaveLength(4);
  });

  it('stops polling when the last viewer leaves', async () => {
    pollingFeeds();
    const unfollow = await feeds.follow(SESSION, { onItem: () => undefined });
    unfollow();
    await vi.advanceTimersByTimeAsync(3 * LOG_POLL_INTERVAL_MS);
    expect(log.reads).toHaveLength(1);
  });

  it('tries a failed read again at the next poll, and says so once', async () => {
    log.events = turnEvents(1, 0, 1);
    const said: unknown[] = [];
    feeds = createSessionFeeds({ client, subscriber: undefined, source: log, onReadError: (_id, error) => said.push(error) });
    const v = viewer();
    await feeds.follow(SESSION, { onItem: v.onItem });
    const readNew = vi.spyOn(log, 'readNew').mockRejectedValueOnce(new Error('unreachable')).mockRejectedValueOnce(new Error('unreachable'));
    await vi.advanceTimersByTimeAsync(2 * LOG_POLL_INTERVAL_MS);
    expect(said).toHaveLength(1);
    log.events = turnEvents(1, 0, 2);
    await vi.advanceTimersByTimeAsync(2 * LOG_POLL_INTERVAL_MS);
    expect(v.seqs()).toEqual([0, 1]);
    expect(readNew.mock.calls.length).toBeGreaterThanOrEqual(3);
  });
});

describe("a viewer's queue", () => {
  it('lets a viewer that falls behind go, with the reason', async () => {
    const queue = new ViewerQueue<number>(2);
    queue.push(1);
    queue.push(2);
    expect(queue.closedWith).toBeUndefined();
    queue.push(3);
    expect(queue.closedWith).toMatch(/fell 2 items behind; reconnect with Last-Event-ID/);
    expect(await queue.next()).toBeUndefined();
  });

  it('hands items over in order to a reader that waits', async () => {
    const queue = new ViewerQueue<number>(1);
    const first = queue.next();
    queue.push(1);
    queue.push(2);
    expect([await first, await queue.next()]).toEqual([1, 2]);
  });
});

describe('the event stream of one viewer', () => {
  beforeEach(() => vi.useRealTimers());

  /** The events route alone over these feeds, every request with a key that may use the session. */
  function eventsApp(route: EventRouteOptions) {
    const app = new OpenAPIHono<{ Variables: GatewayVariables }>();
    app.use('*', async (c, next) => {
      c.set('key', { id: 'test', agents: '*', approve: false });
      await next();
    });
    eventRoutesWith(route)(app, { client, feeds, authorizeSession: async () => undefined } as Pick<GatewayContext, 'client' | 'feeds' | 'authorizeSession'> as GatewayContext);
    return app;
  }

  /** Reads the stream's text until `until` matches it. */
  async function readUntil(body: ReadableStream<Uint8Array>, until: RegExp, text = { seen: '' }): Promise<string> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    try {
      while (!until.test(text.seen)) {
        const { done, value } = await reader.read();
        if (done) break;
        text.seen += decoder.decode(value, { stream: true });
      }
    } finally {
      reader.releaseLock();
    }
    return text.seen;
  }

  it('sends a keepalive comment while the session is quiet', async () => {
    log.events = turnEvents(1, 0, 1);
    liveFeeds();
    const response = await eventsApp({ keepaliveMs: 20 }).request(`/v1/sessions/${SESSION}/events`);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const body = response.body as ReadableStream<Uint8Array>;
    expect(await readUntil(body, /: keepalive\n\n/)).toMatch(/^event: log\ndata: \{.*\}\nid: 0\n\n(: keepalive\n\n)+$/);
    await body.cancel();
    await vi.waitFor(() => expect(feeds.following).toBe(0));
  });

  it('lets a viewer that stops reading go with the reason, and its follower with it', async () => {
    log.events = turnEvents(1, 0, 1);
    liveFeeds();
    const response = await eventsApp({ maxQueuedItems: 3 }).request(`/v1/sessions/${SESSION}/events`);
    const body = response.body as ReadableStream<Uint8Array>;
    const text = { seen: '' };
    await readUntil(body, /id: 0\n\n/, text);
    for (let i = 0; i < 10; i++) subscriber.send(delta(1, `piece ${i}`));
    const all = await readUntil(body, /event: closed\n/, text);
    expect(all).toMatch(/event: closed\ndata: \{"reason":"the viewer fell 3 items behind; reconnect with Last-Event-ID to read what it missed"\}\n\n$/);
    await vi.waitFor(() => expect(feeds.following).toBe(0));
  });
});
