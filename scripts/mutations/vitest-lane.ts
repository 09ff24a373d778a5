/**
 * One mutation lane's vitest, kept running for all of the lane's trials: started as a child
 * process on a copy of the tree (`node bin/launch.js scripts/mutations/vitest-lane.ts ROOT`,
 * with an IPC channel), it loads the config, the global setup and vite's server once, then
 * runs one set of test files per message. A fresh `vitest run` per trial spent a second or
 * two of a core on exactly that start, more than most trials' tests take.
 *
 * Each run is what `vitest run FILE… [-t PATTERN] [--bail 1]` would be in a new process: the
 * files the trial edited are invalidated first (vite serves a module from its graph until told
 * otherwise; each test file runs in a fresh fork, so nothing else holds the old code), and the
 * project's JSON reporter writes the run's report, which main.ts reads as before. What this
 * process itself loaded (the config and what it imports, the global setup and its imports) is
 * never loaded again here: each answer lists those files, and main.ts gives a trial that
 * breaks one of them a fresh vitest of its own.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createVitest } from 'vitest/node';
import { LaneRunSchema, type LaneAnswer, type LaneRun } from './vitest-lane-client';

async function lane(root: string): Promise<void> {
  const send = (answer: LaneAnswer) => new Promise<void>((resolve) => process.send?.(answer, () => resolve()));
  // The reporters, and the forks' own output, write to the current run's log (the file's
  // descriptor), synchronously so no line of a run can land in the next one's; between runs,
  // to nowhere.
  let log: number | undefined;
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (log !== undefined) writeSync(log, chunk);
      done();
    },
  });
  // Vitest pipes each fork's stdout and stderr into this stream, and a pipe ends its target when
  // the fork exits: like process.stdout, this one is never ended, or every later run would be mute.
  out.end = () => out;
  const vitest = await createVitest('test', { root, watch: false }, {}, { stdout: out, stderr: out });
  await vitest.standalone();
  const loaded = () => {
    const files = new Set<string>(vitest.vite.config.configFileDependencies.map((file) => path.resolve(file)));
    for (const project of vitest.projects) {
      const runner = (project as unknown as { runner?: { evaluatedModules?: { fileToModulesMap: Map<string, unknown> } } }).runner;
      for (const file of runner?.evaluatedModules?.fileToModulesMap.keys() ?? []) files.add(path.resolve(file));
    }
    return [...files];
  };
  // Vitest sets the exit code of its process when a run fails; this one's runs are judged by their reports.
  const run = async (request: LaneRun) => {
    log = openSync(request.log, 'w');
    try {
      for (const file of request.changed) vitest.invalidateFile(file);
      vitest.setGlobalTestNamePattern(request.pattern ?? '');
      // configOverride is how vitest's own watch mode changes a setting between runs.
      (vitest as unknown as { configOverride: { bail?: number } }).configOverride.bail = request.bail ? 1 : 0;
      await vitest.runTestFiles(request.files);
      await send({ loaded: loaded() });
    } catch (error) {
      await send({ loaded: loaded(), error: error instanceof Error ? error.message : String(error) });
    } finally {
      process.exitCode = 0;
      closeSync(log);
      log = undefined;
    }
  };
  let queue = Promise.resolve();
  process.on('message', (message: unknown) => {
    const request = LaneRunSchema.parse(message);
    queue = queue.then(() => run(request));
  });
  process.once('disconnect', () => {
    void queue.then(() => vitest.close()).then(() => process.exit(0));
  });
  await send({ loaded: loaded() });
}

const root = process.argv[2];
if (root === undefined) throw new Error('vitest-lane: give the root of the tree copy');
lane(root).catch((error: unknown) => {
  console.error(`vitest-lane: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
