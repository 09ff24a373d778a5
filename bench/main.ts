/**
 * `npm run bench`: measures the agent loop on Temporal against a plain in-process loop
 * and against a floor workflow, side by side in one run, on a private dev server with the
 * scripted LLM, and (but at `--smoke`) a session's billable actions and thousands of open
 * sessions on one worker. Prints a table and writes JSON to bench/results/. `--quick` runs the same
 * code at CI scale, `--smoke` at the least each part can report from (what the tests of its
 * plumbing run); `--out FILE` writes the JSON there instead; `--only long-session` runs that
 * benchmark by itself, `--only stream` the live stream's (bench/stream.ts), `--only limits`
 * the fleet limits' (bench/limits.ts), `--only actions` a session's billable actions
 * (bench/actions.ts), `--only sessions` thousands of open sessions on one worker
 * (bench/open-sessions.ts); `--compare REV`
 * compares the session workflow of a git revision with the working tree's, turn by turn in
 * one run, and `--compare REV --replay` its own CPU by replaying the recorded histories
 * under both, without a server.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { Agent } from 'undici';
import { createToolRunner } from '../activities/tools';
import { startScriptedLlm } from '../testing/scripted-llm/server';
import { DEFAULT_DYNAMIC_CONFIG } from '../harness/dev-server';
import { temporalCliPath } from '../harness/temporal-binaries';
import { BENCH_WORKSPACE, openBenchEnv, RESULTS_DIR, type BenchEnv } from './bench-env';
import { buildBundles, bundleTo, cachedAgentBundle } from './bundles';
import { WORKFLOWS_PATH } from '../worker/create-worker';
import { measureActions } from './actions';
import { formatActions } from './actions-report';
import { ACTIONS_SCALES } from './actions-result';
import { measureCliSpeed } from './cli-speed';
import { formatComparison, measureComparison } from './compare';
import { measureHistoryGrowth } from './history-growth';
import { formatLongSession } from './long-session-report';
import { measureLimits } from './limits';
import { formatLimits } from './limits-report';
import { LIMITS_SCALES } from './limits-result';
import { measureLongSession } from './long-session';
import { measureIdleMemory } from './memory';
import { parseBenchArgs, SCALES } from './options';
import { measureOpenSessions } from './open-sessions';
import { formatOpenSessions } from './open-sessions-report';
import { OPEN_SESSIONS_SCALES } from './open-sessions-result';
import { measureOverhead } from './overhead';
import { formatReport } from './report';
import { measureReplay } from './replay';
import { formatReplayComparison, measureReplayComparison } from './replay-compare';
import { commitOf } from './revision-bundle';
import type { BenchResult } from './result';
import { round } from './stats';
import { checkTargets } from './targets';
import { measureStream } from './stream';
import { formatStream } from './stream-report';
import { measureSaturation } from './throughput';
import { measureCase, serverSweepCases, sweepCases, type SweepRow } from './worker-options';

const GB = 1024 ** 3;
const load = () => os.loadavg().map((l) => round(l));

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  const scaleName = args.scale;
  const scale = SCALES[scaleName];
  // An unknown revision is refused before a server or a bundle is started for it.
  if (args.compare !== undefined) await commitOf(args.compare);
  // Replay workers run in this process; their INFO lines would bury the table.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const started = performance.now();
  const date = new Date().toISOString();
  const loadBefore = load();
  const progress = (line: string) => console.error(`bench: ${line}`);
  const mode = { scaleName, date, loadBefore, out: args.out };

  if (args.compare !== undefined && args.replay) {
    progress(`replaying the recorded histories under the session workflow of ${args.compare} and the working tree's (no server)`);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-replay-'));
    try {
      const treePath = path.join(dir, 'agent.js');
      const tree = scale.cachedBundle ? await cachedAgentBundle(treePath) : await bundleTo(WORKFLOWS_PATH, treePath);
      const comparison = await measureReplayComparison(args.compare, tree, scale.replayCompare, args.histories);
      await mkdir(RESULTS_DIR, { recursive: true });
      await reportOneMode(mode, 'replay comparison', 'replay-compare', { comparison }, formatReplayComparison(comparison));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    return;
  }

  // This run's logs only: the dev server's and the worker processes' output, for post-mortems.
  await mkdir(RESULTS_DIR, { recursive: true });
  await Promise.all(['temporal-dev-server.log', 'worker.log'].map((f) => writeFile(path.join(RESULTS_DIR, f), '')));
  if (args.only === 'stream') {
    // Its own dev server (with --metrics-port), worker processes and gateway: no bundles.
    const stream = await measureStream(scale.stream, progress);
    await reportOneMode(mode, 'live stream only', 'stream', { stream }, formatStream(stream));
    return;
  }
  if (args.only === 'limits') {
    // Its own dev server and two worker processes of one task queue: no bundles.
    const limits = await measureLimits(LIMITS_SCALES[scaleName], { progress, dynamicConfig: args.serverConfig });
    await reportOneMode(mode, 'fleet limits only', 'limits', { limits }, formatLimits(limits));
    return;
  }
  if (args.only === 'actions') {
    // Its own dev server (with --metrics-port) and one worker process: no bundles.
    const actions = await measureActions(ACTIONS_SCALES[scaleName], progress);
    await reportOneMode(mode, 'billable actions only', 'actions', { actions }, formatActions(actions));
    return;
  }
  const llm = await startScriptedLlm();
  progress('starting a dev server and bundling workflows (not measured)');
  const bundling = buildBundles({ cachedAgent: scale.cachedBundle });
  const dispatcher = new Agent();
  let env: BenchEnv | undefined;
  try {
    const cpuProf = args.cpuProf === undefined ? {} : { cpuProfDir: path.resolve(args.cpuProf) };
    env = await openBenchEnv({ llm, bundles: bundling, eager: true, dynamicConfig: args.serverConfig, ...cpuProf });
    const { bundles } = env;
    if (args.only === 'sessions') {
      const sessions = await measureOpenSessions(env, OPEN_SESSIONS_SCALES[scaleName], progress);
      await reportOneMode(mode, 'open sessions only', 'sessions', { sessions }, formatOpenSessions(sessions));
      return;
    }
    if (args.only === 'long-session') {
      if (!scale.longSession) throw new Error(`bench: the ${scaleName} scale has no long-session benchmark`);
      progress(`long session: ${scale.longSession.turns} turns`);
      const longSession = await measureLongSession(env, scale.longSession, progress);
      await reportOneMode(mode, 'long session only', 'long-session', { longSession }, formatLongSession(longSession).join('\n'));
      return;
    }
    if (args.compare !== undefined) {
      progress(`comparing the session workflow of ${args.compare} with the working tree's`);
      const comparison = await measureComparison(env, args.compare, scale.overhead);
      await reportOneMode(mode, 'comparison', 'compare', { comparison }, formatComparison(comparison));
      return;
    }
    const [agent, floor] = await Promise.all([env.startWorker('agent'), env.startWorker('floor')]);
    const plain = { dispatcher, baseUrl: llm.url, runTool: createToolRunner({ dispatcher, workspaceDir: BENCH_WORKSPACE }) };

    progress('1/5 per-step latency');
    const overhead = await measureOverhead(env, { agent, floor }, plain, scale.overhead);
    progress('2/5 throughput at saturation');
    const loadSettings = { stepsPerSession: scale.throughput.stepsPerSession, warmupMs: scale.throughput.warmupMs, windowMs: scale.throughput.windowMs };
    const saturation = await measureSaturation(env, { agent, floor }, scale.throughput.concurrency, loadSettings);
    progress('3/5 history growth');
    const history = await measureHistoryGrowth(env, agent, scale.history);
    await Promise.all([agent.stop(), floor.stop()]);
    progress('4/5 replay');
    const replay = await measureReplay(bundles.agent, history.longest, scale.replay.runs);
    progress('5/5 memory per idle session');
    const memory = await measureIdleMemory(env, scale.memory);
    if (scale.longSession) progress(`and a long session: ${scale.longSession.turns} turns`);
    const longSession = scale.longSession && (await measureLongSession(env, scale.longSession, progress));
    progress('and the CLI\'s start-up, beside temporal --help');
    const cli = await measureCliSpeed(env.server, scale.cli.runs);
    // Both have a `--only` of their own; `--smoke` leaves them to it (its tests run theirs).
    const costs = scaleName === 'smoke' ? {} : { actions: await measureActions(ACTIONS_SCALES[scaleName], progress), sessions: await measureOpenSessions(env, OPEN_SESSIONS_SCALES[scaleName], progress) };

    let workerOptions: SweepRow[] | undefined;
    if (scale.sweep && args.sweep) {
      const settings = { ...scale.sweep, concurrency: saturation.agent.peak.concurrency, stepsPerSession: scale.throughput.stepsPerSession };
      workerOptions = [];
      for (const sweepCase of sweepCases(settings.concurrency)) {
        progress(`worker options: ${sweepCase.option} = ${sweepCase.value}`);
        workerOptions.push(await measureCase(env, sweepCase, settings));
      }
      // A server setting needs a server started with it.
      for (const serverCase of serverSweepCases()) {
        await env.close();
        env = undefined;
        const dynamicConfig = { ...args.serverConfig, ...serverCase.dynamicConfig };
        env = await openBenchEnv({ llm, bundles, eager: serverCase.eager, dynamicConfig, ...cpuProf });
        progress(`server options: ${serverCase.option} = ${serverCase.value}`);
        const row = await measureCase(env, { option: serverCase.option, value: serverCase.value, tuning: {} }, settings, { ...dynamicConfig, 'system.enableActivityEagerExecution': serverCase.eager });
        workerOptions.push(row);
      }
    }

    const partial: Omit<BenchResult, 'targets'> = {
      scale: scaleName,
      machine: machineOf(date, loadBefore),
      server: { version: await temporalVersion(), dynamicConfig: { ...DEFAULT_DYNAMIC_CONFIG, ...args.serverConfig } },
      bundlingMs: Math.round(bundles.bundlingMs),
      durationS: Math.round((performance.now() - started) / 1000),
      overhead,
      throughput: {
        stepsPerSession: scale.throughput.stepsPerSession,
        agent: saturation.agent,
        floor: saturation.floor,
        agentToFloor: round(saturation.agent.peak.stepsPerSec / saturation.floor.peak.stepsPerSec, 3),
        ioFloor: saturation.ioFloor,
        agentToIoFloor: round(saturation.agent.peak.stepsPerSec / saturation.ioFloor.peak.stepsPerSec, 3),
      },
      history: history.result,
      replay,
      memory,
      cli,
      ...(longSession ? { longSession } : {}),
      ...(workerOptions ? { workerOptions } : {}),
      ...costs,
    };
    const result: BenchResult = { ...partial, targets: checkTargets(partial) };
    const json = `${JSON.stringify(result, null, 2)}\n`;
    const file = args.out ?? path.join(RESULTS_DIR, `bench-${scaleName}-${date.replace(/[:.]/g, '-')}.json`);
    await writeFile(file, json);
    console.log(formatReport(result));
    console.log(`\nJSON: ${path.relative(process.cwd(), file)}`);
  } finally {
    await env?.close();
    await dispatcher.close();
    await llm.close();
    await (await bundling.catch(() => undefined))?.remove();
  }
}

/**
 * The report of a run of one mode (`--only`, `--compare`): its JSON, with the scale and the
 * machine, to `--out` or bench/results/bench-<stem>-<date>.json, and its table after a header.
 */
async function reportOneMode(
  run: { scaleName: string; date: string; loadBefore: number[]; out: string | undefined },
  title: string,
  stem: string,
  figures: Record<string, unknown>,
  text: string,
): Promise<void> {
  const machine = machineOf(run.date, run.loadBefore);
  const file = run.out ?? path.join(RESULTS_DIR, `bench-${stem}-${run.date.replace(/[:.]/g, '-')}.json`);
  await writeFile(file, `${JSON.stringify({ scale: run.scaleName, machine, ...figures }, null, 2)}\n`);
  console.log(`Benchmark (${title}) · ${machine.date} · ${machine.nproc} CPUs (${machine.cpuModel}) · load average before ${machine.loadBefore.join(' / ')}, after ${machine.loadAfter.join(' / ')}`);
  console.log(text);
  console.log(`\nJSON: ${path.relative(process.cwd(), file)}`);
}

/** The machine the figures come from, and how busy it was. */
function machineOf(date: string, loadBefore: number[]): BenchResult['machine'] {
  return {
    date,
    nproc: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memTotalGb: round(os.totalmem() / GB, 1),
    memFreeGb: round(os.freemem() / GB, 1),
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    loadBefore,
    loadAfter: load(),
  };
}

/** `temporal --version` of the CLI the dev server runs from, e.g. `temporal version 1.9.1 (Server 1.32.0, UI 2.54.1)`. */
async function temporalVersion(): Promise<string> {
  const { stdout } = await promisify(execFile)(await temporalCliPath(), ['--version']);
  return stdout.trim();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
