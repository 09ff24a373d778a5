import { randomUUID } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../bench/options';
import { BenchResultSchema, type BenchResult } from '../bench/result';
import { runEntry, type CliResult } from './support/cli';

/**
 * `npm run bench -- --smoke` end to end: its own dev server, worker processes and scripted
 * LLM, each measurement at the least it can report from (`--quick` is the same code with
 * more runs). Timings on a shared CI machine are noise, so this checks what does not depend
 * on them: the report's shape, linear history, and a replay.
 */
const out = path.join(tmpdir(), `bench-smoke-${randomUUID()}.json`);
const profiles = path.join(tmpdir(), `bench-smoke-profiles-${randomUUID()}`);
let run: CliResult;
let result: BenchResult;

beforeAll(async () => {
  // A minute on CI; minutes on a loaded machine whose dist/ is older than the sources (the CLI's measure builds it first).
  run = await runEntry('bench/main.ts', ['--smoke', '--out', out, '--cpu-prof', profiles], {}, 240_000);
  if (run.code !== 0) throw new Error(`bench --smoke exited with ${run.code}:\n${run.stderr.slice(-3_000)}`);
  result = BenchResultSchema.parse(JSON.parse(await readFile(out, 'utf8')));
}, 270_000);

afterAll(async () => {
  await rm(out, { force: true });
  await rm(profiles, { recursive: true, force: true });
});

describe('npm run bench -- --smoke', () => {
  it('with --cpu-prof, leaves a V8 CPU profile of each worker process thread (main and workflow) in the folder', async () => {
    const files = (await readdir(profiles)).filter((f) => f.endsWith('.cpuprofile'));
    const pids = new Set(files.map((f) => f.split('.')[3]));
    // The agent and floor workers, and the memory measurement's worker: three processes, two threads each at least.
    expect(pids.size).toBeGreaterThanOrEqual(3);
    expect(files.length).toBeGreaterThanOrEqual(pids.size * 2);
  });

  it('reads its options, and names what it does not know', () => {
    expect(parseBenchArgs(['--quick', '--no-sweep', '--cpu-prof', 'p', '--server-config', 'a.b=1'])).toEqual({ scale: 'quick', sweep: false, replay: false, cpuProf: 'p', serverConfig: { 'a.b': 1 } });
    expect(parseBenchArgs([])).toEqual({ scale: 'full', sweep: true, replay: false, serverConfig: {} });
    expect(parseBenchArgs(['--smoke']).scale).toBe('smoke');
    expect(() => parseBenchArgs(['--quick', '--smoke'])).toThrow(/^bench: --quick and --smoke are two scales/);
    expect(() => parseBenchArgs(['--sweep-less'])).toThrow(/unknown argument "--sweep-less".*--no-sweep/);
  });

  it('writes a JSON report that matches its schema, and prints the table with every target', () => {
    expect(result.scale).toBe('smoke');
    expect(run.stdout).toContain('1. Per-step latency');
    expect(run.stdout).toContain('Targets:');
    expect(result.targets.map((t) => t.name)).toEqual([
      'step overhead over the plain loop, p50 ms',
      'agent step ÷ the floor doing its I/O, p50',
      'agent saturation ÷ the floor doing its I/O',
      expect.stringMatching(/^replay of \d+ steps, ms$/),
      expect.stringMatching(/^history bytes \d+ ÷ \d+ steps$/),
      'agent --help, compiled, median ms',
      'agent list, compiled, median ms',
    ]);
  });

  it('records the compiled CLI\'s start-up beside temporal --help', () => {
    expect(result.cli.agentHelpMs).toBeGreaterThan(0);
    expect(result.cli.agentListMs).toBeGreaterThan(0);
    expect(result.cli.temporalHelpMs).toBeGreaterThan(0);
    expect(run.stdout).toMatch(/6\. CLI start .*agent --help [\d.]+ ms \(target ≤ 300\), agent list [\d.]+ ms \(target ≤ 1000\), temporal --help [\d.]+ ms; fastest runs/);
  });

  it('measures the same steps four ways: plain loop, agent session, the no-op floor and the floor doing the agent\'s I/O', () => {
    const { settings, plain, temporal, floor, ioFloor, temporalToIoFloor, anatomy } = result.overhead;
    const latencies = settings.runs * (settings.steps - 1);
    expect([plain.n, temporal.n, floor.n, ioFloor.n]).toEqual([latencies, latencies, latencies, latencies]);
    expect(temporalToIoFloor).toBeCloseTo(Number(temporal.p50) / Number(ioFloor.p50), 2);
    expect(anatomy.temporal.llmStartToRequestMs).not.toBeNull();
    expect(anatomy.floor.llmStartToRequestMs).toBeNull();
  });

  it('drives the three workflows under load, level by level, and reports steps/s with the worker CPU and RSS, each level the median of three windows', () => {
    expect(result.throughput.ioFloor.workflow).toBe('io-floor');
    for (const saturation of [result.throughput.agent, result.throughput.floor, result.throughput.ioFloor]) {
      expect(saturation.peak.stepsPerSec).toBeGreaterThan(0);
      for (const level of saturation.levels) {
        expect(level.windowStepsPerSec).toHaveLength(3);
        expect(level.stepsPerSec).toBe([...level.windowStepsPerSec].sort((a, b) => a - b)[1]);
      }
      expect(saturation.peak.workerRssMb).toBeGreaterThan(0);
      expect(saturation.levels.map((l) => l.concurrency)).toEqual([1, 2]);
    }
  });

  it('grows history linearly: 50 steps take at most 12 times the bytes of 5', () => {
    const { ratio, points } = result.history;
    expect(points.map((p) => p.steps)).toEqual([5, 50]);
    expect(ratio.value).toBeLessThanOrEqual(12);
    // Quadratic growth (the whole transcript in every LLM input) would be near 100.
    expect(ratio.value).toBeGreaterThan(ratio.linear * 0.8);
  });

  it('replays the 50-step history with the current workflow code', () => {
    expect(result.replay).toMatchObject({ steps: 50, succeeded: true });
    expect(result.replay.events).toBeGreaterThan(50 * 15);
  });

  it('runs a long session to its end across several runs, with no request above the window and history per step flat', () => {
    const long = result.longSession;
    if (!long) throw new Error('the smoke scale runs a long session');
    expect(long.ranToEnd).toBe(true);
    expect(long.turnsAnswered).toBe(long.settings.turns);
    expect(long.runs).toBeGreaterThanOrEqual(2);
    expect(long.log.compactions).toBeGreaterThan(0);
    expect(long.requests.overWindow).toBe(0);
    expect(long.requests.largestTokens).toBeLessThanOrEqual(long.settings.contextWindow);
    // Flat: carrying the whole log would grow each run's input, and so its bytes per step,
    // run after run. The last run ended with the session, after however few steps were left,
    // so its carried input is spread over those: it is judged by its input alone.
    const continued = long.perRun.slice(0, -1).map((r) => r.historyBytesPerStep);
    expect(Math.max(...continued)).toBeLessThanOrEqual(1.5 * Math.min(...continued));
    const [, firstCarried, ...laterCarried] = long.perRun.map((r) => r.inputBytes);
    for (const input of laterCarried) expect(input).toBeLessThanOrEqual(1.5 * (firstCarried ?? 0));
  });

  it('keeps every idle session in the worker cache while measuring its memory', () => {
    expect(result.memory.cachedWorkflows).toBe(result.memory.sessions);
  });
});
