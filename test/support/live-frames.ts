import { LIVE_STREAM_VERSION, type DeltaFrame, type LiveStreamSubscriber, type SessionFrame } from '../../contracts/live-stream';
import { barrier, within } from './barrier';

/** What a follower of one session received, in order, and a barrier on any frame it waits for. */
export function follow(subscriber: Pick<LiveStreamSubscriber, 'subscribe'>, sessionId: string) {
  const frames: SessionFrame[] = [];
  const waiters: { test: (frame: SessionFrame) => boolean; open: () => void }[] = [];
  subscriber.subscribe(sessionId, (frame) => {
    frames.push(frame);
    for (const waiter of waiters) if (waiter.test(frame)) waiter.open();
  });
  return {
    frames,
    /** Resolves once a frame passing `test` has come (or had come); fails naming `what` after 30 s. */
    until(what: string, test: (frame: SessionFrame) => boolean): Promise<void> {
      const seen = barrier();
      if (frames.some(test)) seen.open();
      else waiters.push({ test, open: () => seen.open() });
      return within(seen.wait(), what, 30_000);
    },
  };
}

/** The text deltas among `frames`, of one attempt when it is given. */
export const textDeltas = (frames: readonly SessionFrame[], attempt?: number) => frames.filter((f): f is DeltaFrame => f.kind === 'delta' && f.channel === 'text' && (attempt === undefined || f.attempt === attempt));

/** A text delta of turn 1, step 1, attempt 1. */
export function delta(sessionId: string, offset: number, text: string): DeltaFrame {
  return { kind: 'delta', v: LIVE_STREAM_VERSION, sessionId, turn: 1, step: 1, attempt: 1, channel: 'text', offset, text };
}
