import type { Client } from '@temporalio/client';
import { watchSession, type SessionHandle } from '../client';
import type { TextReceipt } from './stream-latency';

/** `count` people running `agent watch` on one session: what the live view costs today. */
export interface Watchers {
  /** Resolves once every watcher has read the session once (its first line, progress or a failed read). */
  attached: Promise<void>;
  /** Resolves when every watcher has ended: after `until` settles and each has read the log a last time. */
  ended: Promise<void>;
  /** What the first watcher held of the model's text in the turn, and when, from heartbeat details as they changed. */
  heartbeats: TextReceipt[];
  /** When the first watcher read the turn's answer in the log (the whole text). */
  answers: TextReceipt[];
}

/**
 * Starts the watchers, each polling as `watch` does (client/watch.ts, every 500 ms: the
 * session's state and log by Query, its pending activity's heartbeat details by describe),
 * until `until` settles. Only the first records receipts, of `turn` only; all of them cost the same.
 */
export function startWatchers(client: Client, handle: SessionHandle, count: number, turn: number, until: Promise<unknown>): Watchers {
  const heartbeats: TextReceipt[] = [];
  const answers: TextReceipt[] = [];
  const firstReads: Promise<void>[] = [];
  const runs: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    let attach!: () => void;
    firstReads.push(new Promise<void>((resolve) => (attach = resolve)));
    const record = i === 0;
    runs.push(
      watchSession(client, handle, {
        until,
        fromSeq: 0,
        onItem(item) {
          const at = performance.timeOrigin + performance.now();
          attach();
          if (item.type === 'progress' && item.turn === turn) {
            const chars = item.activities.find((a) => a.activityType === 'callLlm')?.heartbeat?.textChars;
            if (record && chars) heartbeats.push({ end: chars, at });
          } else if (record && item.type === 'event' && item.event.type === 'assistant' && item.event.turn === turn) {
            answers.push({ end: item.event.message.text.length, at });
          }
        },
      }),
    );
  }
  return { attached: Promise.all(firstReads).then(() => undefined), ended: Promise.all(runs).then(() => undefined), heartbeats, answers };
}
