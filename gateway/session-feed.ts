import type { Client } from '@temporalio/client';
import type { SessionEvent } from '../contracts/session-log';
import type { DeltaFrame, LiveStreamSubscriber, ProgressFrame } from '../contracts/live-stream';
import { temporalLogSource, type SessionLogSource } from './feed/log-source';
import { SessionFollower } from './feed/session-follower';

/**
 * What a follower of one session receives, in order: every log event after `afterSeq`
 * exactly once and in seq order (durable: read from Temporal whatever the live stream
 * lost), and the live stream's deltas and progress as they come (best effort).
 */
export type FeedItem = { type: 'log'; event: SessionEvent } | { type: 'delta'; frame: DeltaFrame } | { type: 'progress'; frame: ProgressFrame };

export interface FollowOptions {
  /** Deliver log events with a seq above this one (`Last-Event-ID`); -1 or absent: from the start. */
  afterSeq?: number;
  signal?: AbortSignal;
  onItem(item: FeedItem): void;
  /** The feeds closed (the gateway is shutting down): nothing more comes. */
  onClose?(reason: string): void;
}

/**
 * One follower per session in the gateway, shared by all its viewers: the number of
 * Temporal reads does not grow with the number of viewers.
 */
export interface SessionFeeds {
  follow(sessionId: string, options: FollowOptions): Promise<() => void>;
  /** How many sessions are followed now (each by one follower, whatever its viewers). */
  readonly following: number;
  close(): Promise<void>;
}

export interface SessionFeedsOptions {
  client: Client;
  /** The live stream; absent (`AGENT_LIVE_STREAM=off`): followers poll the log. */
  subscriber: LiveStreamSubscriber | undefined;
  /** How often a followed session's log is read while the live stream is down; default {@link LOG_POLL_INTERVAL_MS}. */
  pollIntervalMs?: number;
  /** How many of a session's latest events its follower keeps for viewers that join late; default {@link WINDOW_EVENTS}. */
  windowEvents?: number;
  /** Where the log is read; default: Temporal through `client`. */
  source?: SessionLogSource;
  /** A read of a followed session's log failed (said once until one succeeds); default: a line on stderr. */
  onReadError?(sessionId: string, error: unknown): void;
}

/**
 * Without the live stream a follower reads what is new every 2 s: one `log` Query per
 * followed session per poll, whatever the number of its viewers, so Temporal's reads grow
 * with the time sessions are followed, never with viewers.
 */
export const LOG_POLL_INTERVAL_MS = 2_000;
export const WINDOW_EVENTS = 1_000;

/**
 * The gateway's followers, one per session with at least one viewer (closed when its last
 * viewer leaves). Each subscribes to its session on the live stream, and reads the log
 * from Temporal for a viewer's catch-up, for what the live stream lost (a gap in the
 * seqs, a `hello`, the subscriber reconnecting), and every poll while the stream is down.
 */
export function createSessionFeeds(options: SessionFeedsOptions): SessionFeeds {
  const { subscriber } = options;
  const source = options.source ?? temporalLogSource(options.client);
  const onReadError = options.onReadError ?? ((sessionId, error) => console.warn(`gateway: reading the log of session ${sessionId} failed: ${error instanceof Error ? error.message : String(error)}`));
  const followers = new Map<string, { follower: SessionFollower; unsubscribe: () => void }>();
  const closers = new Set<(reason: string) => void>();
  const live = () => subscriber?.connected === true;

  const forEachFollower = (act: (follower: SessionFollower) => void) => {
    for (const { follower } of followers.values()) act(follower);
  };
  const unlisten = subscriber
    ? [subscriber.onResync(() => forEachFollower((f) => f.resync())), subscriber.onConnectionChange(() => forEachFollower((f) => f.connectionChanged()))]
    : [];

  const followerOf = (sessionId: string) => {
    const known = followers.get(sessionId);
    if (known) return known.follower;
    const follower = new SessionFollower({
      sessionId,
      source,
      live,
      pollIntervalMs: options.pollIntervalMs ?? LOG_POLL_INTERVAL_MS,
      windowEvents: options.windowEvents ?? WINDOW_EVENTS,
      onReadError: (error) => onReadError(sessionId, error),
    });
    const unsubscribe = subscriber ? subscriber.subscribe(sessionId, (frame) => follower.onFrame(frame)) : () => undefined;
    followers.set(sessionId, { follower, unsubscribe });
    return follower;
  };
  const release = (sessionId: string, follower: SessionFollower) => {
    const entry = followers.get(sessionId);
    if (entry?.follower !== follower || follower.viewers > 0) return;
    followers.delete(sessionId);
    entry.unsubscribe();
    follower.close();
  };

  return {
    get following() {
      return followers.size;
    },
    async follow(sessionId, { afterSeq = -1, signal, onItem, onClose }) {
      if (signal?.aborted) return () => undefined;
      const follower = followerOf(sessionId);
      let state: Awaited<ReturnType<SessionFollower['add']>> | undefined;
      let left = false;
      const leave = () => {
        if (left) return;
        left = true;
        signal?.removeEventListener('abort', leave);
        if (onClose) closers.delete(onClose);
        if (state) follower.remove(state);
        release(sessionId, follower);
      };
      signal?.addEventListener('abort', leave, { once: true });
      if (onClose) closers.add(onClose);
      try {
        state = await follower.add({ onItem }, afterSeq);
      } catch (error) {
        leave();
        throw error;
      }
      // It left while its catch-up was read.
      if (left) follower.remove(state);
      release(sessionId, follower);
      return leave;
    },
    async close() {
      for (const stop of unlisten) stop();
      for (const close of [...closers]) close('the gateway is shutting down');
      closers.clear();
      for (const [sessionId, { follower, unsubscribe }] of followers) {
        unsubscribe();
        follower.close();
        followers.delete(sessionId);
      }
    },
  };
}
