/**
 * main.ts's side of a lane's long-running vitest (vitest-lane.ts): starts it on a copy of the
 * tree, asks it for one run at a time and reads its answers, parsed, since they cross a
 * process boundary.
 */
import { spawn } from 'node:child_process';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { PROJECT_ROOT } from '../../harness/temporal-binaries';

/** One run: the files and options of `vitest run`, its log file, and the files edited since the lane's last run. */
export const LaneRunSchema = z.object({
  files: z.array(z.string()),
  pattern: z.string().optional(),
  bail: z.boolean(),
  log: z.string(),
  changed: z.array(z.string()),
});
export type LaneRun = z.infer<typeof LaneRunSchema>;

/** The lane's answer when it is ready and after each run: the files its own process has loaded (absolute paths). */
export const LaneAnswerSchema = z.object({ loaded: z.array(z.string()), error: z.string().optional() });
export type LaneAnswer = z.infer<typeof LaneAnswerSchema>;

export interface VitestLane {
  /** Files the lane's process loaded itself, as of its last answer: a break of one needs a fresh vitest. */
  loaded(): ReadonlySet<string>;
  /** Runs once; resolves when the run's JSON report is written. */
  run(request: LaneRun): Promise<void>;
  close(): Promise<void>;
}

/** The lane's vitest on `root`, ready once this resolves; its own output (the forks' stray lines) goes to `logFile`. */
export async function startVitestLane(root: string, env: NodeJS.ProcessEnv, logFile: string): Promise<VitestLane> {
  const out = await open(logFile, 'w');
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'launch.js'), path.join(PROJECT_ROOT, 'scripts', 'mutations', 'vitest-lane.ts'), root], {
    cwd: root,
    env,
    stdio: ['ignore', out.fd, out.fd, 'ipc'],
  });
  let loaded = new Set<string>();
  let waiting: { resolve: (answer: LaneAnswer) => void; reject: (error: Error) => void } | undefined;
  let exited: Error | undefined;
  child.on('message', (message: unknown) => {
    const parsed = LaneAnswerSchema.safeParse(message);
    const pending = waiting;
    waiting = undefined;
    if (!parsed.success) pending?.reject(new Error(`the vitest lane answered something else than a lane answer; see ${logFile}`));
    else pending?.resolve(parsed.data);
  });
  child.once('exit', (code, signal) => {
    exited = new Error(`the vitest lane exited (${signal ?? `code ${code}`}); see ${logFile}`);
    waiting?.reject(exited);
    waiting = undefined;
    void out.close();
  });
  const answer = () =>
    new Promise<LaneAnswer>((resolve, reject) => {
      if (exited) reject(exited);
      else waiting = { resolve, reject };
    });
  const ready = await answer();
  loaded = new Set(ready.loaded);
  return {
    loaded: () => loaded,
    async run(request) {
      const answered = answer();
      child.send(request);
      const result = await answered;
      loaded = new Set(result.loaded);
      if (result.error !== undefined) throw new Error(`the vitest lane's run failed: ${result.error}`);
    },
    async close() {
      if (exited) return;
      const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.disconnect();
      await ended;
    },
  };
}
