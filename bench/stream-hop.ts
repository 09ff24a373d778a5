import { setTimeout as sleep } from 'node:timers/promises';
import { parseLiveStreamEnv } from '../config/live-stream';
import { LIVE_STREAM_VERSION } from '../contracts/live-stream';
import { createLiveStreamPublisher, createLiveStreamSubscriber } from '../streaming';
import { summarize } from './stream-latency';
import type { StreamTransport, TransportHop } from './stream-result';

/** How long the publisher may take to reach the subscriber before the hop is reported unreached. */
const REACH_TIMEOUT_MS = 15_000;
/** How long after the last frame the subscriber may still receive the rest; what has not come by then was lost. */
const DRAIN_MS = 2_000;
/** The pace of the frames: about a thousand a second, faster than any model writes. */
const FRAME_EVERY_MS = 1;

/**
 * One transport alone, in this process: a publisher and a subscriber of the live stream
 * as worker and gateway make them (streaming/), and `frames` delta frames whose text is
 * their send time; each is timed when the subscriber hands it over, decoded and checked.
 * What the end-to-end figure adds to this is the gateway's feed, its SSE and the browser.
 */
export async function measureHop(transport: StreamTransport, liveEnv: Record<string, string>, frames: number): Promise<TransportHop> {
  const config = parseLiveStreamEnv(liveEnv, { namespace: 'default', taskQueue: `bench-hop-${process.pid}` });
  const subscriber = await createLiveStreamSubscriber(config, { log: () => undefined });
  const latencies: number[] = [];
  const unsubscribe = subscriber.subscribe('hop', (frame) => {
    if (frame.kind === 'delta') latencies.push(performance.timeOrigin + performance.now() - Number(frame.text));
  });
  const reached = new Promise<boolean>((resolve) => {
    subscriber.onResync(() => resolve(true));
    setTimeout(() => resolve(false), REACH_TIMEOUT_MS).unref();
  });
  const publisher = createLiveStreamPublisher(config, { log: () => undefined, reconnectMs: 100 });
  try {
    if (!(await reached)) return { transport, frames, received: 0, latency: summarize([]) };
    for (let offset = 0; offset < frames; offset++) {
      const text = String(performance.timeOrigin + performance.now());
      publisher.publish({ kind: 'delta', v: LIVE_STREAM_VERSION, sessionId: 'hop', turn: 1, step: 1, attempt: 1, channel: 'text', offset, text });
      await sleep(FRAME_EVERY_MS);
    }
    for (const deadline = Date.now() + DRAIN_MS; latencies.length < frames && Date.now() < deadline; ) await sleep(10);
    return { transport, frames, received: latencies.length, latency: summarize(latencies) };
  } finally {
    unsubscribe();
    await publisher.close();
    await subscriber.close();
  }
}
