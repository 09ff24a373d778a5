import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { LiveStreamLog } from './stream-log';

/** The first wait between tries, doubled up to the ceiling, and back to the first once connected. */
const FIRST_WAIT_MS = 250;
const MAX_WAIT_MS = 2_000;

export interface NatsLinkHandlers {
  /** Connected: the first time, or back after the broker was lost. */
  up(nc: NatsConnection): void;
  /** The broker is gone; the client keeps trying. */
  down(): void;
}

/**
 * A connection to the broker that is tried forever, with backoff: the first connection by
 * this loop (the client's own retry starts only once it has connected once), every later
 * one by the NATS client, which keeps the subscriptions across reconnects. Only the servers'
 * hosts are ever logged, never credentials in their URLs.
 */
export class NatsLink {
  #nc: NatsConnection | undefined;
  #up = false;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  #wait = FIRST_WAIT_MS;

  constructor(
    private readonly servers: readonly string[],
    private readonly name: string,
    private readonly log: LiveStreamLog,
    private readonly handlers: NatsLinkHandlers,
  ) {}

  get up(): boolean {
    return this.#up;
  }

  get connection(): NatsConnection | undefined {
    return this.#up ? this.#nc : undefined;
  }

  /** The first try; resolves when it has connected or failed (later tries go on behind). */
  async start(): Promise<void> {
    await this.#try();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const nc = this.#nc;
    this.#nc = undefined;
    this.#up = false;
    // Flushes what was published; a broker that is down cannot hold the close.
    if (nc) await nc.close().catch(() => undefined);
  }

  async #try(): Promise<void> {
    if (this.#closed) return;
    let nc: NatsConnection;
    try {
      nc = await connect({
        servers: [...this.servers],
        name: this.name,
        timeout: 5_000,
        maxReconnectAttempts: -1,
        reconnectDelayHandler: () => this.#nextWait(),
      });
    } catch (error) {
      if (this.#wait === FIRST_WAIT_MS) this.log(`live stream: no broker at ${hostsOf(this.servers)} (${codeOf(error)}); trying again, live frames are dropped meanwhile`);
      this.#timer = setTimeout(() => void this.#try(), this.#nextWait());
      this.#timer.unref();
      return;
    }
    if (this.#closed) {
      await nc.close().catch(() => undefined);
      return;
    }
    this.#nc = nc;
    this.#connected(nc);
    void this.#watch(nc);
  }

  async #watch(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (this.#closed) return;
      if (status.type === 'disconnect' && this.#up) {
        this.#up = false;
        this.log(`live stream: lost the broker at ${hostsOf(this.servers)}; live frames are dropped until it is back`);
        this.handlers.down();
      } else if (status.type === 'reconnect') {
        this.#connected(nc);
      }
    }
  }

  #connected(nc: NatsConnection): void {
    this.#up = true;
    this.#wait = FIRST_WAIT_MS;
    this.log(`live stream: connected to the broker at ${hostsOf(this.servers)}`);
    this.handlers.up(nc);
  }

  #nextWait(): number {
    const wait = this.#wait;
    this.#wait = Math.min(this.#wait * 2, MAX_WAIT_MS);
    return wait;
  }
}

/** `host:port` of each server: a URL's user and password stay out of every line. */
export function hostsOf(servers: readonly string[]): string {
  return servers.map((s) => (URL.canParse(s) ? new URL(s).host : '?')).join(',');
}

/** The error's code, not its message: a client's message may quote the URL it tried, credentials and all. */
function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : error instanceof Error ? error.name : 'error';
}
