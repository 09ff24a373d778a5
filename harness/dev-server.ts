/**
 * `npm run server`: the Temporal dev server for this project, with its UI on
 * http://localhost:8233, gRPC on localhost:7233 and history in `.data/temporal.sqlite`,
 * so sessions survive a restart of the server.
 *
 * Also exports `startDevServer`, the one way this project starts a dev server: the
 * test global setup, `npm start` and the crash tests all use it.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { addSearchAttributes, CLI_TYPE_NAMES, searchAttributeGaps, type Key } from '../worker/search-attribute-gaps';
import { AGENT_SEARCH_ATTRIBUTES } from '../contracts/search-attributes';
import { PROJECT_ROOT, temporalCliPath } from './temporal-binaries';

export interface DevServerOptions {
  /** Frontend gRPC port. Default 7233. */
  port?: number;
  /** Web UI port. Default `port + 1000` (the CLI's own rule); `false` runs headless. */
  uiPort?: number | false;
  /** Interface to bind gRPC and UI to. Default `localhost` (the CLI binds it to 127.0.0.1). */
  ip?: string;
  /** SQLite file, created with its folder if missing. Default: none, history lives in memory. */
  dbFile?: string;
  /** Namespace created at start and checked for readiness. Default `default`. */
  namespace?: string;
  /** Search attributes to register in `namespace`. Default: the agent's (`AGENT_SEARCH_ATTRIBUTES`). */
  searchAttributes?: readonly Key[];
  /** Dynamic config as KEY=JSON pairs. Default: eager activity execution on (see DEFAULT_DYNAMIC_CONFIG). */
  dynamicConfig?: Readonly<Record<string, unknown>>;
  /** More `temporal server start-dev` arguments, appended last. */
  extraArgs?: readonly string[];
  /** Where the server's own output goes. Default `inherit`. */
  output?: 'inherit' | 'ignore' | { file: string };
  /**
   * How long to wait for the namespace to answer. Default 60 s: a cold start of the
   * 150 MB binary on a busy 2-core CI machine takes seconds, not the SDK's 5.
   */
  startTimeoutMs?: number;
  /** The `temporal` binary. Default `temporalCliPath()` (env, installed, or installs it). */
  executable?: string;
}

export interface DevServer {
  /** `host:port` of the frontend, for `Connection.connect` and `NativeConnection.connect`. */
  readonly address: string;
  /** Web UI base URL, or undefined when headless. */
  readonly uiUrl: string | undefined;
  readonly namespace: string;
  readonly pid: number;
  /** Settles when the process exits, with its exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** SIGTERM to the server's process group, SIGKILL if it has not exited after 10 s. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Server-side switches the dev server does not turn on by itself, both measured by
 * `npm run bench` (bench/README.md):
 * - eager activity execution lets a worker that completes a workflow task start the
 *   activity it just scheduled without another round trip through matching;
 * - the history service loads new transfer tasks (the workflow task that follows an
 *   activity's completion) at most `transferProcessorMaxPollRPS` times a second, 20 by
 *   default: each of a step's two workflow tasks then waits for the next load, and a
 *   step takes 100 ms instead of 50. Raising the cap costs nothing when idle.
 */
export const DEFAULT_DYNAMIC_CONFIG: Readonly<Record<string, unknown>> = {
  'system.enableActivityEagerExecution': true,
  'history.transferProcessorMaxPollRPS': 1000,
};

/** `--dynamic-config-value KEY=JSON` pairs for `temporal server start-dev`. */
export function dynamicConfigArgs(config: Readonly<Record<string, unknown>>): string[] {
  return Object.entries(config).flatMap(([key, value]) => ['--dynamic-config-value', `${key}=${JSON.stringify(value)}`]);
}

const STOP_GRACE_MS = 10_000;

export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  try {
    return await startDevServerOnce(options);
  } catch (error) {
    // The CLI picks its HTTP API port itself, from ports free a moment before it binds
    // them; on a machine where other processes open ports at the same time that moment
    // can be lost. Once more then, with whatever port it picks the second time.
    if (!(error instanceof Error) || !error.message.includes('address already in use')) throw error;
    return startDevServerOnce(options);
  }
}

async function startDevServerOnce(options: DevServerOptions): Promise<DevServer> {
  const port = options.port ?? 7233;
  const uiPort = options.uiPort === false ? undefined : (options.uiPort ?? port + 1000);
  const ip = options.ip ?? 'localhost';
  const namespace = options.namespace ?? 'default';
  const searchAttributes = options.searchAttributes ?? AGENT_SEARCH_ATTRIBUTES;
  const dynamicConfig = options.dynamicConfig ?? DEFAULT_DYNAMIC_CONFIG;
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const executable = options.executable ?? (await temporalCliPath());

  const args = ['server', 'start-dev', '--ip', ip, '--port', String(port), '--namespace', namespace];
  args.push(...(uiPort === undefined ? ['--headless'] : ['--ui-port', String(uiPort)]));
  if (options.dbFile !== undefined) {
    await mkdir(path.dirname(path.resolve(options.dbFile)), { recursive: true });
    args.push('--db-filename', options.dbFile);
  }
  for (const key of searchAttributes) args.push('--search-attribute', `${key.name}=${CLI_TYPE_NAMES[key.type]}`);
  args.push(...dynamicConfigArgs(dynamicConfig));
  args.push(...(options.extraArgs ?? []));

  const address = `${ip}:${port}`;
  const output = options.output ?? 'inherit';
  const log: WriteStream | undefined =
    typeof output === 'object' ? await openLog(output.file) : undefined;

  // Its own process group, so stop() can take down everything it may spawn, and a
  // Ctrl-C meant for the parent reaches the server only through our orderly stop().
  // Output always goes through pipes: if this process dies without stopping it, the
  // server's next write hits a closed pipe and it exits instead of lingering.
  const child = spawn(executable, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid;
  if (pid === undefined) {
    const error = await new Promise<Error>((resolve) => child.once('error', resolve));
    throw new Error(`could not start ${executable}: ${error.message}`);
  }

  let tail = '';
  const onData = (stream: NodeJS.WriteStream) => (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4_000);
    if (output === 'inherit') stream.write(chunk);
    else log?.write(chunk);
  };
  child.stdout.on('data', onData(process.stdout));
  child.stderr.on('data', onData(process.stderr));

  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      exitCode = code;
      process.off('exit', killOnExit);
      log?.end();
      resolve(code);
    });
  });

  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-pid, signal);
    } catch {
      // Already gone.
    }
  };
  // Last resort when the parent exits without calling stop() (process.exit, an uncaught error).
  const killOnExit = (): void => signalGroup('SIGTERM');
  process.on('exit', killOnExit);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (exitCode !== undefined) return;
      signalGroup('SIGTERM');
      const timer = setTimeout(() => signalGroup('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    })();
    return stopping;
  };

  try {
    const connection = await waitUntilServing(address, namespace, startTimeoutMs, () =>
      exitCode === undefined ? undefined : `exited with code ${exitCode}`,
    );
    try {
      await ensureSearchAttributes(connection, namespace, searchAttributes);
    } finally {
      await connection.close();
    }
  } catch (error) {
    await stop();
    const message = error instanceof Error ? error.message : String(error);
    const lastLines = tail.trim().split('\n').slice(-5).join('\n');
    throw new Error(`temporal dev server on ${address}: ${message}${lastLines ? `\n${lastLines}` : ''}`);
  }

  const uiHost = ip === '0.0.0.0' || ip === '::' ? 'localhost' : ip;
  return {
    address,
    uiUrl: uiPort === undefined ? undefined : `http://${uiHost}:${uiPort}`,
    namespace,
    pid,
    exited,
    stop,
  };
}

async function openLog(file: string): Promise<WriteStream> {
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  return createWriteStream(file, { flags: 'a' });
}

/**
 * Resolves with an open connection once `namespace` answers on `address`. A listening
 * port is not enough: the frontend accepts connections before the namespace registry
 * has loaded, and the first StartWorkflowExecution would fail with NamespaceNotFound.
 *
 * @param whyDead returns a reason when the server process is gone, to fail at once
 *   instead of waiting for the timeout.
 */
export async function waitUntilServing(
  address: string,
  namespace = 'default',
  timeoutMs = 60_000,
  whyDead: () => string | undefined = () => undefined,
): Promise<Connection> {
  const deadline = Date.now() + timeoutMs;
  let lastError = 'no answer yet';
  for (;;) {
    const dead = whyDead();
    if (dead !== undefined) throw new Error(`${dead} before it answered`);
    let connection: Connection | undefined;
    try {
      const connected = await Connection.connect({ address, connectTimeout: '2s' });
      connection = connected;
      await connected.withDeadline(Date.now() + 5_000, () =>
        connected.workflowService.describeNamespace({ namespace }),
      );
      return connected;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
      await connection?.close();
    }
    if (Date.now() >= deadline) {
      throw new Error(`namespace "${namespace}" did not answer within ${timeoutMs} ms (last error: ${lastError})`);
    }
    await sleep(250);
  }
}

/**
 * `--search-attribute` registers keys only when the SQLite file is new: a server
 * restarted on an existing `.data/temporal.sqlite` silently skips keys added since.
 * So the missing ones are added here, through the operator API, every start.
 */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
  keys: readonly Key[],
): Promise<void> {
  if (keys.length === 0) return;
  const gaps = await searchAttributeGaps(connection.operatorService, namespace, keys);
  const [wrong] = gaps.wrongType;
  if (wrong) {
    throw new Error(`search attribute ${wrong.key.name} is already registered as ${wrong.registered}, not ${wrong.key.type}; use a fresh --db-filename`);
  }
  await addSearchAttributes(connection.operatorService, namespace, gaps.missing);
}

/** A port that was free a moment ago (the OS picks it); good enough for tests on one machine. */
export async function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not determine a free port'));
      });
    });
  });
}

/** Where `npm run server` keeps history: git-ignored, survives restarts. */
export const DEFAULT_DB_FILE = path.join(PROJECT_ROOT, '.data', 'temporal.sqlite');

async function main(): Promise<void> {
  const server = await startDevServer({ port: 7233, uiPort: 8233, dbFile: DEFAULT_DB_FILE, output: 'inherit' });
  console.log(
    `Temporal dev server ready: gRPC ${server.address}, UI ${server.uiUrl ?? '(headless)'}, ` +
      `history in ${path.relative(process.cwd(), DEFAULT_DB_FILE)}. Ctrl-C stops it.`,
  );
  let stoppedBy: NodeJS.Signals | undefined;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      stoppedBy = signal;
      console.log(`\n${signal}: stopping the Temporal dev server...`);
      void server.stop();
    });
  }
  const code = await server.exited;
  if (stoppedBy !== undefined) process.exit(0);
  // The server died on its own: that is a failure for whoever ran us.
  console.error(`temporal dev server exited unexpectedly (code ${code ?? 'signal'})`);
  process.exit(1);
}

const invokedDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
