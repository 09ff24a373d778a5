import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { LiveStreamSubscriber, SessionFrame } from '../contracts/live-stream';
import { decodeFrame } from './frame-lines';
import { NatsLink } from './nats-link';
import type { NatsSubjects } from './nats-subjects';
import { consoleLog, OnceLog, type LiveStreamLog } from './stream-log';
import { SubscriberListeners } from './subscriber-listeners';

/**
 * The gateway's side over NATS: a subscription per followed session and one to the fleet's
 * hellos. `connected` is false while the broker is away (the gateway's feeds read logs from
 * Temporal then); coming back it says so and asks for a resync, as frames were lost.
 * Every message is checked against LiveFrameSchema and against its subject's session; a
 * bad one is dropped and said once.
 */
export class NatsSubscriber implements LiveStreamSubscriber {
  readonly #listeners: SubscriberListeners;
  readonly #link: NatsLink;
  readonly #subscriptions = new Map<string, Subscription>();
  readonly #malformed: OnceLog;
  #helloSubscribed = false;

  private constructor(
    servers: readonly string[],
    private readonly subjects: NatsSubjects,
    log: LiveStreamLog,
  ) {
    this.#listeners = new SubscriberListeners(log);
    this.#malformed = new OnceLog(log, 'dropped a malformed frame from the broker');
    this.#link = new NatsLink(servers, 'durable-agent-gateway', log, {
      up: (nc) => this.#up(nc),
      down: () => this.#listeners.connectionChanged(false),
    });
  }

  /** Resolves after the first try to connect, connected or not: a gateway starts without its broker, and follows logs from Temporal until it is there. */
  static async connect(servers: readonly string[], subjects: NatsSubjects, options: { log?: LiveStreamLog } = {}): Promise<NatsSubscriber> {
    const subscriber = new NatsSubscriber(servers, subjects, options.log ?? consoleLog);
    await subscriber.#link.start();
    return subscriber;
  }

  get connected(): boolean {
    return this.#link.up;
  }

  subscribe(sessionId: string, onFrame: (frame: SessionFrame) => void): () => void {
    return this.#listeners.follow(sessionId, onFrame, {
      first: () => {
        const nc = this.#link.connection;
        if (nc) this.#subscribeSession(nc, sessionId);
      },
      last: () => {
        this.#subscriptions.get(sessionId)?.unsubscribe();
        this.#subscriptions.delete(sessionId);
      },
    });
  }

  onResync(listener: () => void): () => void {
    return this.#listeners.onResync(listener);
  }

  onConnectionChange(listener: (connected: boolean) => void): () => void {
    return this.#listeners.onConnectionChange(listener);
  }

  async close(): Promise<void> {
    const wasUp = this.#link.up;
    await this.#link.close();
    this.#subscriptions.clear();
    if (wasUp) this.#listeners.connectionChanged(false);
  }

  /**
   * Connected: on the first connection the subscriptions are made (the NATS client keeps
   * them across its reconnects); every time, followers hear that the stream is back and
   * that what it carried meanwhile is lost.
   */
  #up(nc: NatsConnection): void {
    if (!this.#helloSubscribed) nc.subscribe(this.subjects.hello, { callback: (_error, msg) => this.#receive(msg.data, undefined) });
    this.#helloSubscribed = true;
    for (const sessionId of this.#listeners.sessions()) if (!this.#subscriptions.has(sessionId)) this.#subscribeSession(nc, sessionId);
    this.#listeners.connectionChanged(true);
    this.#listeners.resync();
  }

  #subscribeSession(nc: NatsConnection, sessionId: string): void {
    this.#subscriptions.set(sessionId, nc.subscribe(this.subjects.session(sessionId), { callback: (_error, msg) => this.#receive(msg.data, sessionId) }));
  }

  /** `sessionId`: the session whose subject it came on (none: the hello subject). */
  #receive(data: Uint8Array, sessionId: string | undefined): void {
    const decoded = decodeFrame(data);
    if (!decoded.ok) return this.#malformed.report(decoded.why);
    const { frame } = decoded;
    const where = frame.kind === 'hello' ? undefined : frame.sessionId;
    if (where !== sessionId) return this.#malformed.report(`a frame on the subject of another ${sessionId === undefined ? 'kind' : 'session'}`);
    this.#listeners.deliver(frame);
  }
}
