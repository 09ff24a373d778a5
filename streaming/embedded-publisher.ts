import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { LIVE_STREAM_VERSION, type LiveFrame, type LiveStreamPublisher } from '../contracts/live-stream';
import { encodeFrame } from './frame-lines';
import { consoleLog, type LiveStreamLog } from './stream-log';

export interface PublisherOptions {
  /** Named in this publisher's `hello`; a fresh random id by default. */
  publisherId?: string;
  log?: LiveStreamLog;
  /** How long a publisher without a gateway waits before it tries again. Default 2000 ms. */
  reconnectMs?: number;
  /** What may wait in the socket's buffer for a slow gateway before frames are dropped. Default 8 MiB. */
  maxBufferedBytes?: number;
}

/**
 * The worker's side of the embedded stream: a client of the gateway's Unix socket that
 * writes one JSON frame per line. `publish` never waits and never throws: with no gateway
 * listening, or one too slow to keep the buffer under its bound, the frame is dropped
 * (the log, read from Temporal, has what matters). The connection is tried again every
 * `reconnectMs`, and each (re)connection starts with a `hello`, so the gateway reads the
 * logs again for what was lost meanwhile.
 */
export class EmbeddedPublisher implements LiveStreamPublisher {
  readonly publisherId: string;
  readonly #log: LiveStreamLog;
  readonly #reconnectMs: number;
  readonly #maxBufferedBytes: number;
  #socket: net.Socket | undefined;
  #connected = false;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  /** Said once per time without a gateway, not at every try. */
  #saidAway = false;
  #dropped = 0;

  constructor(
    readonly socketPath: string,
    options: PublisherOptions = {},
  ) {
    this.publisherId = options.publisherId ?? randomUUID();
    this.#log = options.log ?? consoleLog;
    this.#reconnectMs = options.reconnectMs ?? 2_000;
    this.#maxBufferedBytes = options.maxBufferedBytes ?? 8 * 1024 * 1024;
    this.#connect();
  }

  /** True while a gateway is connected. */
  get connected(): boolean {
    return this.#connected;
  }

  /** Frames dropped so far (no gateway, a full buffer, too large). */
  get dropped(): number {
    return this.#dropped;
  }

  publish(frame: LiveFrame): void {
    const socket = this.#socket;
    if (!this.#connected || !socket) {
      this.#dropped++;
      return;
    }
    const line = encodeFrame(frame);
    if (!line || socket.writableLength + line.length > this.#maxBufferedBytes) {
      this.#dropped++;
      return;
    }
    socket.write(line);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const socket = this.#socket;
    if (!socket || socket.destroyed) return;
    // What is buffered goes out first, but a gateway that stopped reading cannot hold a worker's shutdown.
    const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const giveUp = setTimeout(() => socket.destroy(), 2_000);
    socket.end();
    await gone;
    clearTimeout(giveUp);
  }

  #connect(): void {
    const socket = net.createConnection(this.socketPath);
    this.#socket = socket;
    // Best effort to the end: a publisher never holds its process open.
    socket.unref();
    socket.on('connect', () => {
      this.#connected = true;
      this.#saidAway = false;
      this.#log(`live stream: connected to the gateway at ${this.socketPath}`);
      socket.write(encodeFrame({ kind: 'hello', v: LIVE_STREAM_VERSION, publisherId: this.publisherId }) as Buffer);
    });
    // The gateway sends nothing; reading keeps the socket flowing should it ever.
    socket.resume();
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (!this.#connected && !this.#saidAway) {
        this.#saidAway = true;
        this.#log(`live stream: no gateway listening at ${this.socketPath} (${error.code ?? 'error'}); live frames are dropped until one does, trying every ${this.#reconnectMs / 1000} s`);
      }
    });
    socket.on('close', () => {
      if (this.#connected) this.#log('live stream: the gateway went away; live frames are dropped until it is back');
      this.#connected = false;
      if (this.#socket === socket) this.#socket = undefined;
      if (this.#closed) return;
      this.#timer = setTimeout(() => this.#connect(), this.#reconnectMs);
      // A worker that stops must not wait for a gateway that never comes.
      this.#timer.unref();
    });
  }
}
