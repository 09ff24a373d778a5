import { spawn } from 'node:child_process';
import path from 'node:path';
import { entryArgs } from './cli';

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
 * follow a session (`watch`, `send --wait`) while the test acts on it, started as
 * `runEntry` in cli.ts starts it (through the launcher); that one is for commands that
 * just run to the end.
 */
export function spawnEntry(entry: string, args: string[], env: Record<string, string>): RunningCli {
  const child = spawn(process.execPath, entryArgs(entry, args), {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  // Each waitFor looks again whenever output arrives or the output ends, instead of polling.
  const watchers = new Set<() => void>();
  const changed = () => {
    for (const watcher of watchers) watcher();
  };
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    changed();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    changed();
  });
  // 'close' comes after the last output, so a pattern printed just before the exit still counts.
  let closed = false;
  child.once('close', () => {
    closed = true;
    changed();
  });
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
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise<void>((resolve, reject) => {
        const settle = (failure?: string) => {
          clearTimeout(timer);
          watchers.delete(look);
          if (failure) reject(new Error(`${entry} ${args.join(' ')} ${failure}\nstdout:\n${out}\nstderr:\n${err}`));
          else resolve();
        };
        const look = () => {
          if (pattern.test(out + err)) settle();
          else if (closed) settle(`exited before printing ${pattern}`);
        };
        const timer = setTimeout(() => settle(`did not print ${pattern} within ${timeoutMs} ms`), timeoutMs);
        watchers.add(look);
        look();
      });
    },
  };
}
