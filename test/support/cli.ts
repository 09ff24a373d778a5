import { execFile } from 'node:child_process';
import path from 'node:path';

const ROOT = path.join(import.meta.dirname, '..', '..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The product's entry points that `npm run client` and `npm run worker` start through
 * bin/launch.js, by source file. The launcher runs them from dist/ when the build is
 * newer than every source and from the sources otherwise, so a run on edited sources
 * tests the edit, and CI (which builds first) skips compiling TypeScript on every start.
 */
const LAUNCHED = new Map([
  ['client/main.ts', 'client/main'],
  ['worker/main.ts', 'worker/main'],
]);

/**
 * The arguments of `node` that start a project entry point as its npm script does:
 * bin/launch.js with the product entry, or with a script's `.ts` file (tsx in its main
 * thread only, as `npm start` and `npm run bench` run).
 */
export function entryArgs(entry: string, args: readonly string[]): string[] {
  return [path.join(ROOT, 'bin', 'launch.js'), LAUNCHED.get(entry) ?? path.join(ROOT, entry), ...args];
}

/** Runs a project entry point (`client/main.ts`, `scripts/start.ts`) as a user would, through the launcher. */
export function runEntry(entry: string, args: string[], env: Record<string, string>, timeoutMs = 120_000): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      entryArgs(entry, args),
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', ...env }, timeout: timeoutMs },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
