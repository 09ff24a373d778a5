import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../../config/config-error';
import { dim } from '../output';
import { allRunHistories, runHistory, type RunHistory } from '../run-histories';
import { parseCommandArgs, printJson, withClient, type Command } from './command';

export const historyCommand: Command = {
  name: 'history',
  synopsis: 'history <id> --out FILE [--run RUNID | --all] [--json]',
  summary:
    "Writes a session's Temporal event history to FILE as JSON, the format Worker.runReplayHistory loads: an incident becomes a replay test in one command. " +
    'A session that continued as new has one history per run: the latest run by default (the output names it and the run before it), --run RUNID for another, ' +
    '--all for every run, first to last, each in its own file FILE.run-1.json, FILE.run-2.json, … (FILE without its .json).',
  async run(argv, { env }) {
    const { values, positionals } = parseCommandArgs(this, argv, { out: { type: 'string' }, run: { type: 'string' }, all: { type: 'boolean', default: false } }, ['<id>']);
    if (values.out === undefined || values.out === '') throw new ConfigError('history needs --out FILE');
    if (values.run !== undefined && values.all) throw new ConfigError('history takes --run RUNID or --all, not both');
    if (values.run === '') throw new ConfigError('history --run needs a run id');
    const [id = ''] = positionals;
    const out = values.out;
    return withClient(env, async (client) => {
      if (values.all) {
        const runs = await allRunHistories(client.workflow, id);
        const files = runs.map((_, i) => runFile(out, i + 1));
        await Promise.all(runs.map((run, i) => write(files[i] as string, run)));
        if (values.json) printJson({ workflowId: id, runs: runs.map((run, i) => ({ runId: run.runId, file: path.resolve(files[i] as string), events: run.events })) });
        else {
          runs.forEach((run, i) => console.log(`wrote ${run.events} events of ${id} run ${i + 1} of ${runs.length} (${run.runId}) to ${files[i]}`));
          console.log(dim(REPLAY_HINT));
        }
        return 0;
      }
      const run = await runHistory(client.workflow, id, values.run);
      await write(out, run);
      if (values.json) {
        printJson({ workflowId: id, runId: run.runId, file: path.resolve(out), events: run.events, ...(run.continuedFromRunId ? { continuedFromRunId: run.continuedFromRunId } : {}) });
      } else {
        console.log(`wrote ${run.events} events of ${id} (run ${run.runId}) to ${out}`);
        if (run.continuedFromRunId) {
          console.log(dim(`it continued as new from run ${run.continuedFromRunId}: history ${id} --run ${run.continuedFromRunId} --out FILE, or --all for every run`));
        }
        console.log(dim(REPLAY_HINT));
      }
      return 0;
    });
  },
};

const REPLAY_HINT = 'replay it: save it in test/fixtures/histories/ and run npx vitest run test/replay.test.ts (README: "Replay a session")';

/** `incident.json` → `incident.run-2.json`. */
function runFile(out: string, run: number): string {
  return `${out.replace(/\.json$/i, '')}.run-${run}.json`;
}

async function write(file: string, run: RunHistory): Promise<void> {
  await writeFile(path.resolve(file), run.json).catch((error: unknown) => {
    throw new ConfigError(`cannot write ${file}: ${error instanceof Error ? error.message : String(error)}`);
  });
}
