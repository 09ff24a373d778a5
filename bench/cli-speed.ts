import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ensureBuilt } from '../scripts/build';
import { PROJECT_ROOT, temporalCliPath } from '../harness/temporal-binaries';
import { median, round } from './stats';

const run = promisify(execFile);
const AGENT = path.join(PROJECT_ROOT, 'bin', 'agent.js');

/** The start-up targets of the compiled CLI on this machine (2 cores). */
export const CLI_TARGETS = { agentHelpMs: 300, agentListMs: 1_000 } as const;

export interface CliSpeed {
  runs: number;
  /** `agent --help`, compiled (`npm run build`); median wall time of a whole process. */
  agentHelpMs: number;
  /** `agent list` against the benchmark's dev server. */
  agentListMs: number;
  /** `temporal --help`, the Temporal CLI (Go), for comparison. */
  temporalHelpMs: number;
  /** The fastest run of each: what the machine can do when other work lets it. */
  fastest: { agentHelpMs: number; agentListMs: number; temporalHelpMs: number };
}

/**
 * How long the CLI takes from spawn to exit, as a person at a shell sees it, side by side
 * with the `temporal` CLI. Builds `dist/` first if it is not up to date (not measured).
 */
export async function measureCliSpeed(server: { address: string; namespace: string }, runs = 5): Promise<CliSpeed> {
  await ensureBuilt();
  const env = { ...process.env, NO_COLOR: '1', TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: server.namespace };
  const temporal = await temporalCliPath();
  const time = async (file: string, args: string[]) => {
    const samples: number[] = [];
    // One unmeasured run: the first start of a binary pays for the disk cache.
    for (let i = 0; i <= runs; i++) {
      const started = performance.now();
      await run(file, args, { env, cwd: PROJECT_ROOT });
      if (i > 0) samples.push(performance.now() - started);
    }
    return { median: round(median(samples)), fastest: round(Math.min(...samples)) };
  };
  const help = await time(process.execPath, [AGENT, '--help']);
  const list = await time(process.execPath, [AGENT, 'list']);
  const temporalHelp = await time(temporal, ['--help']);
  return {
    runs,
    agentHelpMs: help.median,
    agentListMs: list.median,
    temporalHelpMs: temporalHelp.median,
    fastest: { agentHelpMs: help.fastest, agentListMs: list.fastest, temporalHelpMs: temporalHelp.fastest },
  };
}
