import type { SessionFrame } from '../../contracts/live-stream';
import type { SessionEvent } from '../../contracts/session-log';
import type { FeedItem } from '../session-feed';
import type { SessionLogSource } from './log-source';

/** One viewer of a followed session, as its follower sees it. */
export interface FollowerViewer {
  onItem(item: FeedItem): void;
}

export interface FollowerOptions {
  sessionId: string;
  source: SessionLogSource;
  /** Whether the live stream is up now: while it is not, the follower polls the log. */
  live(): boolean;
  pollIntervalMs: number;
  /** How many of the latest events the follower keeps, so a viewer joining late is served without a read. */
  windowEvents: number;
  /** A read of the log failed (said once until one succeeds): it is tried again at the next poll, resync or gap. */
  onReadError(error: unknown): void;
}

interface ViewerState {
  viewer: FollowerViewer;
  /** The last log seq delivered to it. */
  lastSeq: number;
  /** False while its catch-up from the log is being read: live deltas and progress wait for it in `held`. */
  ready: boolean;
  held: FeedItem[];
}

/**
 * The one follower of a session in a gateway, shared by all its viewers. It holds the log
 * from where its first viewer started, as one contiguous run of seqs ending at `nextSeq`:
 * a live log frame that continues it is taken, one it already has is dropped, and one
 * that starts past `nextSeq` (frames were lost) makes it read the missing range from the
 * log before it delivers anything after it. Every viewer thus gets each event once, in
 * seq order, whatever the live stream lost or repeated.
 *
 * Reads are per follower, never per viewer: one sync at a time (a request made while one
 * runs asks for one more after it), one poll timer while the live stream is down, and
 * the latest `windowEvents` kept so that viewers joining it are served from memory.
 */
export class SessionFollower {
  readonly #options: FollowerOptions;
  readonly #viewers = new Set<ViewerState>();
  /** The latest events, contiguous, the last one at `#nextSeq - 1`. */
  #window: SessionEvent[] = [];
  /** Undefined until the first read says where the log is. */
  #nextSeq: number | undefined;
  /** The last turn the log says has ended: deltas of it, or of turns before it, are late and dropped. */
  #endedTurn = 0;
  #starting: Promise<readonly SessionEvent[]> | undefined;
  #syncing: Promise<void> | undefined;
  #syncAgain = false;
  #pollTimer: NodeJS.Timeout | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #closed = false;
  #failing = false;

  constructor(options: FollowerOptions) {
    this.#options = options;
  }

  get viewers(): number {
    return this.#viewers.size;
  }

  /**
   * Adds a viewer and delivers it the log after `afterSeq` (clamped to the log's end),
   * read from Temporal only for what the window does not hold; from then on it gets what
   * the follower takes. Resolves once that catch-up is delivered.
   */
  async add(viewer: FollowerViewer, afterSeq: number): Promise<ViewerState> {
    const state: ViewerState = { viewer, lastSeq: afterSeq, ready: false, held: [] };
    this.#viewers.add(state);
    try {
      // The first read is the log the window starts with: its viewers take it whole, even the part the window lets go.
      if (this.#nextSeq === undefined) this.#catchUp(state, afterSeq + 1, await (this.#starting ??= this.#start(afterSeq + 1)));
      state.lastSeq = Math.min(state.lastSeq, (this.#nextSeq ?? 0) - 1);
      // The window may move on while a catch-up is read: read until the viewer meets it.
      while (state.lastSeq + 1 < this.#windowStart()) {
        const fromSeq = state.lastSeq + 1;
        const { events } = await this.#options.source.read(this.#options.sessionId, fromSeq);
        if (!this.#catchUp(state, fromSeq, events)) break;
      }
      this.#deliverContiguous(state, this.#window);
      state.ready = true;
      for (const item of state.held.splice(0)) viewer.onItem(item);
    } catch (error) {
      this.#viewers.delete(state);
      this.#updatePolling();
      throw error;
    }
    this.#updatePolling();
    return state;
  }

  /** Removes a viewer; the caller closes the follower when none is left. */
  remove(state: ViewerState): void {
    this.#viewers.delete(state);
    this.#updatePolling();
  }

  /** A frame of this session from the live stream. */
  onFrame(frame: SessionFrame): void {
    if (frame.kind === 'log') return this.#take(frame.events);
    if (frame.kind === 'delta' && frame.turn <= this.#endedTurn) return;
    const item: FeedItem = frame.kind === 'delta' ? { type: 'delta', frame } : { type: 'progress', frame };
    for (const state of this.#viewers) {
      // Bounded by the window: a catch-up is one read, and what streams meanwhile is a few deltas.
      if (!state.ready) {
        if (state.held.length < this.#options.windowEvents) state.held.push(item);
      } else state.viewer.onItem(item);
    }
  }

  /** The live stream may have lost frames (a publisher or the subscriber reconnected): read what is new. */
  resync(): void {
    this.#requestSync();
  }

  /** The live stream went up or down: poll while it is down. */
  connectionChanged(): void {
    this.#updatePolling();
    if (this.#options.live()) this.#requestSync();
  }

  close(): void {
    this.#closed = true;
    this.#viewers.clear();
    this.#updatePolling();
    clearTimeout(this.#retryTimer);
  }

  async #start(fromSeq: number): Promise<readonly SessionEvent[]> {
    try {
      const { events, nextSeq } = await this.#options.source.read(this.#options.sessionId, fromSeq);
      // Past the log's end (a made-up Last-Event-ID) is its end; a log that starts later (a fork's) starts there.
      this.#nextSeq = events[0]?.seq ?? Math.min(fromSeq, nextSeq);
      this.#take(events);
      return events;
    } finally {
      this.#starting = undefined;
      if (this.#syncAgain) this.#requestSync();
    }
  }

  #windowStart(): number {
    return this.#window[0]?.seq ?? this.#nextSeq ?? 0;
  }

  /** Events read or received, in seq order: what continues the log is taken and delivered. */
  #take(events: readonly SessionEvent[]): void {
    if (this.#nextSeq === undefined) {
      // Still starting: the first read may have been answered before these were appended.
      this.#syncAgain = true;
      return;
    }
    for (const event of events) {
      if (event.seq < this.#nextSeq) continue;
      if (event.seq > this.#nextSeq) {
        // Frames were lost: what lies between is read from the log, and this comes with it.
        this.#requestSync();
        return;
      }
      this.#window.push(event);
      if (this.#window.length > this.#options.windowEvents) this.#window.shift();
      this.#nextSeq = event.seq + 1;
      if (event.type === 'turn/end') this.#endedTurn = Math.max(this.#endedTurn, event.turn);
      for (const state of this.#viewers) {
        if (!state.ready) continue;
        state.lastSeq = event.seq;
        state.viewer.onItem({ type: 'log', event });
      }
    }
  }

  /** Delivers a read of the log from `fromSeq`; false when it held nothing the viewer lacked. */
  #catchUp(state: ViewerState, fromSeq: number, events: readonly SessionEvent[]): boolean {
    const first = events[0];
    // A log that starts later than asked (a fork's does) has nothing before its first event.
    if (first !== undefined && fromSeq === state.lastSeq + 1 && first.seq > fromSeq) state.lastSeq = first.seq - 1;
    const before = state.lastSeq;
    this.#deliverContiguous(state, events);
    return state.lastSeq !== before;
  }

  #deliverContiguous(state: ViewerState, events: readonly SessionEvent[]): void {
    for (const event of events) {
      if (event.seq <= state.lastSeq) continue;
      if (event.seq !== state.lastSeq + 1) return;
      state.lastSeq = event.seq;
      state.viewer.onItem({ type: 'log', event });
    }
  }

  #requestSync(): void {
    if (this.#closed) return;
    if (this.#syncing !== undefined || this.#starting !== undefined || this.#nextSeq === undefined) {
      this.#syncAgain = true;
      return;
    }
    this.#syncing = this.#sync().finally(() => {
      this.#syncing = undefined;
    });
  }

  async #sync(): Promise<void> {
    do {
      this.#syncAgain = false;
      try {
        this.#take(await this.#options.source.readNew(this.#options.sessionId, this.#nextSeq ?? 0));
        this.#failing = false;
      } catch (error) {
        // Once until a read succeeds: a session gone for good would otherwise be said every poll.
        if (!this.#failing) this.#options.onReadError(error);
        this.#failing = true;
        // Live, nothing else would ask again until the next gap: try once more after a poll's wait.
        clearTimeout(this.#retryTimer);
        this.#retryTimer = setTimeout(() => this.#requestSync(), this.#options.pollIntervalMs);
        this.#retryTimer.unref();
        return;
      }
    } while (this.#syncAgain && !this.#closed);
  }

  #updatePolling(): void {
    const poll = !this.#closed && this.#viewers.size > 0 && !this.#options.live();
    if (poll && this.#pollTimer === undefined) {
      this.#pollTimer = setInterval(() => this.#requestSync(), this.#options.pollIntervalMs);
      this.#pollTimer.unref();
    } else if (!poll && this.#pollTimer !== undefined) {
      clearInterval(this.#pollTimer);
      this.#pollTimer = undefined;
    }
  }
}
