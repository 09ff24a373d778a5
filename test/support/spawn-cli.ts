import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = path.join(import.meta.dirname, '..', '..');

export interface RunningCli {
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout + stderr match, rejects with both when `timeoutMs` passes or the process exits first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** The exit code; null when a signal killed the process. */
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
}

/**
 * A project entry point (`client/main.ts`) running in the background, for commands that
 * follow a session (`watch`, `send --wait`) while the test acts on it. `runEntry` in
 * cli.ts is the one for commands that just run to the end.
 */
export function spawnEntry(entry: string, args: string[], env: Record<string, string>): RunningCli {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry), ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  let done = false;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      done = true;
      resolve(code);
    });
  });
  return {
    stdout: () => out,
    stderr: () => err,
    exited,
    kill: (signal = 'SIGTERM') => {
      if (!done) child.kill(signal);
    },
    async waitFor(pattern, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(out + err)) {
        if (done) throw new Error(`${entry} ${args.join(' ')} exited before printing ${pattern}\nstdout:\n${out}\nstderr:\n${err}`);
        if (Date.now() > deadline) throw new Error(`${entry} ${args.join(' ')} did not print ${pattern} within ${timeoutMs} ms\nstdout:\n${out}\nstderr:\n${err}`);
        await sleep(50);
      }
    },
  };
}
