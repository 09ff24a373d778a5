/**
 * A real NATS server for the tests, the benchmarks and the multi-machine setup on one
 * machine: the pinned binary of harness/temporal-binaries.ts, on a port of its own choosing
 * the first time and on that same port after a restart, so clients that knew it reconnect.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { natsServerPath } from './temporal-binaries';

export interface NatsServer {
  /** `nats://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGTERM, then SIGKILL): its clients lose it. */
  stop(): Promise<void>;
  /** Starts it again on the same port once stopped. */
  start(): Promise<void>;
  /** Stops it for good. */
  close(): Promise<void>;
}

const READY = /Listening for client connections on [^\s:]+:(\d+)/;

export async function startNatsServer(options: { readyTimeoutMs?: number } = {}): Promise<NatsServer> {
  const binary = await natsServerPath();
  const timeoutMs = options.readyTimeoutMs ?? 20_000;
  let child: ChildProcess | undefined;
  // `-p -1`: the server picks a free port and says which; a restart asks for that one.
  let port = -1;

  const launch = async (): Promise<void> => {
    const proc = spawn(binary, ['-a', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    const killOnExit = () => proc.kill('SIGKILL');
    process.on('exit', killOnExit);
    proc.once('exit', () => process.off('exit', killOnExit));
    port = await new Promise<number>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => fail(new Error(`nats-server did not listen within ${timeoutMs} ms:\n${output.slice(-1000)}`)), timeoutMs);
      const fail = (error: Error) => {
        clearTimeout(timer);
        proc.kill('SIGKILL');
        reject(error);
      };
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const listening = READY.exec(output);
        if (listening) {
          clearTimeout(timer);
          resolve(Number(listening[1]));
        }
      };
      proc.stdout?.on('data', onData);
      proc.stderr?.on('data', onData);
      proc.once('exit', (code) => fail(new Error(`nats-server exited with code ${code} before it listened:\n${output.slice(-1000)}`)));
    });
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGTERM');
    const kill = setTimeout(() => proc.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(kill);
  };

  await launch();
  return {
    get url() {
      return `nats://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    stop,
    async start() {
      if (child) return;
      await launch();
    },
    close: stop,
  };
}
