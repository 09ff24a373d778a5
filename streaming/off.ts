import type { LiveStreamPublisher, LiveStreamSubscriber } from '../contracts/live-stream';

/** AGENT_LIVE_STREAM=off: every frame is dropped. */
export const OFF_PUBLISHER: LiveStreamPublisher = {
  publish: () => undefined,
  close: () => Promise.resolve(),
};

/** AGENT_LIVE_STREAM=off: never connected, so a gateway follows every session from Temporal. */
export function offSubscriber(): LiveStreamSubscriber {
  return {
    subscribe: () => () => undefined,
    onResync: () => () => undefined,
    connected: false,
    onConnectionChange: () => () => undefined,
    close: () => Promise.resolve(),
  };
}
