import type { LiveStreamPublisher, LiveStreamSubscriber } from '../contracts/live-stream';
import { defaultSocketPath, subjectPrefixOf, type LiveStreamConfig } from '../config/live-stream';
import { EmbeddedPublisher, type PublisherOptions } from './embedded-publisher';
import { EmbeddedSubscriber } from './embedded-subscriber';
import { NatsPublisher } from './nats-publisher';
import { NatsSubjects } from './nats-subjects';
import { NatsSubscriber } from './nats-subscriber';
import { OFF_PUBLISHER, offSubscriber } from './off';
import type { LiveStreamLog } from './stream-log';

export type { LiveStreamConfig } from '../config/live-stream';
export { LiveStreamError } from './live-stream-error';
export type { PublisherOptions } from './embedded-publisher';

const DEFAULT_SUBJECT_PREFIX = subjectPrefixOf({ namespace: 'default', taskQueue: 'agent' });

/**
 * The worker's publisher for `config` (docs/live-stream.md). It connects in the background
 * and never waits: frames published before it is connected are dropped.
 *
 * @example
 * const publisher = createLiveStreamPublisher(parseLiveStreamEnv(process.env));
 * publisher.publish({ kind: 'hello', v: 1, publisherId: 'worker-1' });
 * await publisher.close();
 */
export function createLiveStreamPublisher(config: LiveStreamConfig, options: PublisherOptions = {}): LiveStreamPublisher {
  switch (config.mode) {
    case 'off':
      return OFF_PUBLISHER;
    case 'embedded':
      return new EmbeddedPublisher(config.socketPath, options);
    case 'nats':
      return new NatsPublisher(config.servers, new NatsSubjects(config.subjectPrefix ?? DEFAULT_SUBJECT_PREFIX), options);
  }
}

/**
 * The gateway's subscriber for `config`: embedded, it listens on the socket (and fails
 * with a LiveStreamError naming AGENT_LIVE_STREAM_SOCKET when it cannot, or when another
 * gateway listens there); over NATS it resolves after its first try to connect, connected
 * or not (`connected` says which).
 */
export async function createLiveStreamSubscriber(config: LiveStreamConfig, options: { log?: LiveStreamLog } = {}): Promise<LiveStreamSubscriber> {
  switch (config.mode) {
    case 'off':
      return offSubscriber();
    case 'embedded':
      return EmbeddedSubscriber.listen(config.socketPath, { ...options, privateFolder: isDefaultFolder(config.socketPath) });
    case 'nats':
      return NatsSubscriber.connect(config.servers, new NatsSubjects(config.subjectPrefix ?? DEFAULT_SUBJECT_PREFIX), options);
  }
}

/** The folder of the default socket path is made private; a path of one's own keeps its folder as it is. */
function isDefaultFolder(socketPath: string): boolean {
  return socketPath.startsWith(defaultSocketPath({ namespace: '', taskQueue: '' }).replace(/[^/]*$/, ''));
}
