import type { LiveFrame, SessionFrame } from '../contracts/live-stream';
import type { LiveStreamLog } from './stream-log';

/**
 * The listeners of a subscriber, whatever carries its frames: the followers of each
 * session, those told of a resync and of the connection. A listener that throws is logged
 * and the others still hear: one broken follower never stops the gateway's stream.
 */
export class SubscriberListeners {
  readonly #sessions = new Map<string, Set<(frame: SessionFrame) => void>>();
  readonly #resync = new Set<() => void>();
  readonly #connection = new Set<(connected: boolean) => void>();

  constructor(private readonly log: LiveStreamLog) {}

  /** Adds a follower; `first` is called when it is the session's first, `last` when its unsubscribe leaves none. */
  follow(sessionId: string, onFrame: (frame: SessionFrame) => void, hooks: { first?: () => void; last?: () => void } = {}): () => void {
    let listeners = this.#sessions.get(sessionId);
    if (!listeners) {
      listeners = new Set();
      this.#sessions.set(sessionId, listeners);
      hooks.first?.();
    }
    // Wrapped, so one function that follows twice is two followers with two unsubscribes.
    const listener = (frame: SessionFrame) => onFrame(frame);
    listeners.add(listener);
    return () => {
      if (!listeners.delete(listener) || listeners.size > 0) return;
      this.#sessions.delete(sessionId);
      hooks.last?.();
    };
  }

  /** The sessions someone follows now. */
  sessions(): string[] {
    return [...this.#sessions.keys()];
  }

  /** A frame that passed the schema: a hello tells every resync listener, any other its session's followers. */
  deliver(frame: LiveFrame): void {
    if (frame.kind === 'hello') {
      this.resync();
      return;
    }
    for (const listener of this.#sessions.get(frame.sessionId) ?? []) this.#call(() => listener(frame));
  }

  onResync(listener: () => void): () => void {
    return added(this.#resync, listener);
  }

  onConnectionChange(listener: (connected: boolean) => void): () => void {
    return added(this.#connection, listener);
  }

  resync(): void {
    for (const listener of [...this.#resync]) this.#call(listener);
  }

  connectionChanged(connected: boolean): void {
    for (const listener of [...this.#connection]) this.#call(() => listener(connected));
  }

  #call(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.log(`live stream: a listener failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    }
  }
}

function added<T>(set: Set<T>, item: T): () => void {
  set.add(item);
  return () => set.delete(item);
}
