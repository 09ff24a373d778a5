import { randomUUID } from 'node:crypto';
import { LIVE_STREAM_VERSION, type LiveFrame, type LiveStreamPublisher } from '../contracts/live-stream';
import type { PublisherOptions } from './embedded-publisher';
import { encodeFrame } from './frame-lines';
import { NatsLink } from './nats-link';
import type { NatsSubjects } from './nats-subjects';
import { consoleLog } from './stream-log';

/**
 * The worker's side over NATS: core publish (no persistence, as the stream is best
 * effort) on the session's subject. While the broker is away every frame is dropped, not
 * buffered (the NATS client would buffer without a bound), and on every (re)connection a
 * `hello` goes to the fleet's subject, so gateways read the logs again for what was lost.
 */
export class NatsPublisher implements LiveStreamPublisher {
  readonly publisherId: string;
  readonly #link: NatsLink;

  constructor(
    servers: readonly string[],
    private readonly subjects: NatsSubjects,
    options: Pick<PublisherOptions, 'publisherId' | 'log'> = {},
  ) {
    this.publisherId = options.publisherId ?? randomUUID();
    this.#link = new NatsLink(servers, 'durable-agent-worker', options.log ?? consoleLog, {
      up: (nc) => nc.publish(this.subjects.hello, encodeFrame({ kind: 'hello', v: LIVE_STREAM_VERSION, publisherId: this.publisherId }) as Buffer),
      down: () => undefined,
    });
    void this.#link.start();
  }

  publish(frame: LiveFrame): void {
    const nc = this.#link.connection;
    const line = nc && encodeFrame(frame);
    if (!nc || !line) return;
    try {
      nc.publish(frame.kind === 'hello' ? this.subjects.hello : this.subjects.session(frame.sessionId), line);
    } catch {
      // Closed between the check and the call: dropped like any frame without a broker.
    }
  }

  close(): Promise<void> {
    return this.#link.close();
  }
}
