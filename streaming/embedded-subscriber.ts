import { lstat, mkdir, chmod, unlink } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { LiveStreamSubscriber, SessionFrame } from '../contracts/live-stream';
import { decodeFrame, LineSplitter } from './frame-lines';
import { LiveStreamError } from './live-stream-error';
import { consoleLog, OnceLog, type LiveStreamLog } from './stream-log';
import { SubscriberListeners } from './subscriber-listeners';

export interface EmbeddedSubscriberOptions {
  log?: LiveStreamLog;
  /**
   * The socket's folder is this process's own: made 0700 when missing, and a folder of
   * another user's is refused. True for the default path under the OS temp folder; a path
   * of one's own (AGENT_LIVE_STREAM_SOCKET) keeps its folder as it is.
   */
  privateFolder?: boolean;
}

/**
 * The gateway's side of the embedded stream: a Unix socket server that the machine's
 * workers connect to, each writing one JSON frame per line. Every frame is checked against
 * LiveFrameSchema here; a malformed one is dropped and said once, never thrown. One
 * gateway per socket: a second finds the first listening and is refused (several gateways
 * need the broker).
 */
export class EmbeddedSubscriber implements LiveStreamSubscriber {
  readonly #listeners: SubscriberListeners;
  readonly #server: net.Server;
  readonly #peers = new Set<net.Socket>();
  readonly #malformed: OnceLog;
  #connected = true;

  private constructor(
    readonly socketPath: string,
    server: net.Server,
    log: LiveStreamLog,
  ) {
    this.#server = server;
    this.#listeners = new SubscriberListeners(log);
    this.#malformed = new OnceLog(log, 'dropped a malformed frame from a worker');
    server.on('connection', (socket) => this.#accept(socket));
  }

  /** Listens on `socketPath` (0600), replacing a socket file nobody listens on any more. */
  static async listen(socketPath: string, options: EmbeddedSubscriberOptions = {}): Promise<EmbeddedSubscriber> {
    const log = options.log ?? consoleLog;
    await prepareFolder(path.dirname(socketPath), options.privateFolder === true);
    await clearStaleSocket(socketPath);
    const server = net.createServer();
    const subscriber = new EmbeddedSubscriber(socketPath, server, log);
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => reject(new LiveStreamError(`AGENT_LIVE_STREAM_SOCKET: cannot listen at ${socketPath} (${error.code ?? error.message})`)));
      server.listen(socketPath, () => resolve());
    });
    // Only this user's processes may write frames the gateway would show as a session's.
    await chmod(socketPath, 0o600);
    return subscriber;
  }

  /** Frames dropped as malformed so far. */
  get malformed(): number {
    return this.#malformed.count;
  }

  get connected(): boolean {
    return this.#connected;
  }

  subscribe(sessionId: string, onFrame: (frame: SessionFrame) => void): () => void {
    return this.#listeners.follow(sessionId, onFrame);
  }

  onResync(listener: () => void): () => void {
    return this.#listeners.onResync(listener);
  }

  onConnectionChange(listener: (connected: boolean) => void): () => void {
    return this.#listeners.onConnectionChange(listener);
  }

  async close(): Promise<void> {
    if (!this.#connected) return;
    this.#connected = false;
    for (const peer of this.#peers) peer.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await unlink(this.socketPath).catch(() => undefined);
    this.#listeners.connectionChanged(false);
  }

  #accept(socket: net.Socket): void {
    this.#peers.add(socket);
    const lines = new LineSplitter(
      (line) => {
        const decoded = decodeFrame(line);
        if (decoded.ok) this.#listeners.deliver(decoded.frame);
        else this.#malformed.report(decoded.why);
      },
      () => this.#malformed.report('a line longer than the frame limit'),
    );
    socket.on('data', (chunk: Buffer) => lines.push(chunk));
    // A worker that goes away mid-line loses that frame only; its reconnect says hello.
    socket.on('error', () => undefined);
    socket.on('close', () => this.#peers.delete(socket));
  }
}

async function prepareFolder(folder: string, own: boolean): Promise<void> {
  await mkdir(folder, { recursive: true, mode: 0o700 });
  if (!own) return;
  const stat = await lstat(folder);
  const uid = process.getuid?.();
  // A folder under the shared temp folder that someone else made first could be theirs to read.
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) throw new LiveStreamError(`AGENT_LIVE_STREAM_SOCKET: ${folder} is not a folder of this user's; set AGENT_LIVE_STREAM_SOCKET to a path in one`);
  if ((stat.mode & 0o077) !== 0) await chmod(folder, 0o700);
}

/** A socket file left by a gateway that died is removed; one that answers is another gateway's. */
async function clearStaleSocket(socketPath: string): Promise<void> {
  const stat = await lstat(socketPath).catch(() => undefined);
  if (!stat) return;
  if (!stat.isSocket()) throw new LiveStreamError(`AGENT_LIVE_STREAM_SOCKET: ${socketPath} exists and is not a socket`);
  const answered = await new Promise<boolean>((resolve) => {
    const probe = net.createConnection(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (answered) throw new LiveStreamError(`AGENT_LIVE_STREAM_SOCKET: another gateway listens at ${socketPath}; several gateways on one machine need a broker (AGENT_LIVE_STREAM=nats://…)`);
  await unlink(socketPath);
}
