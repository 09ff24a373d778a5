import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { CompareResult } from '../bench/compare';
import { countedReplays } from '../bench/promise-count';
import { workflowBundle } from '../harness/local-agent';
import type { ReplayCompareResult } from '../bench/replay-compare';
import { parseBenchArgs } from '../bench/options';
import { runEntry } from './support/cli';

/**
 * `npm run bench -- --smoke --compare REV`: the session workflow of a revision beside the
 * working tree's and the floor, in one run, at the least it can report from (one measured
 * turn of each). Timings here are noise; this checks that all three loops ran the same
 * turns and were measured.
 */
const out = path.join(tmpdir(), `bench-compare-${randomUUID()}.json`);
afterAll(() => rm(out, { force: true }));

describe('npm run bench -- --compare REV', () => {
  it('measures the workflow of a revision, the working tree\'s and the floor in the same rounds', async () => {
    const run = await runEntry('bench/main.ts', ['--smoke', '--compare', 'HEAD', '--out', out], {}, 150_000);
    expect(run.code, run.stderr.slice(-2_000)).toBe(0);
    const { comparison } = JSON.parse(await readFile(out, 'utf8')) as { comparison: CompareResult };
    const { stdout: head } = await promisify(execFile)('git', ['rev-parse', 'HEAD']);
    expect(comparison.commit).toBe(head.trim());
    for (const loop of Object.values(comparison.loops)) {
      expect(loop.stepP50Ms).toBeGreaterThan(0);
      expect(loop.workerCpuMsPerStep).toBeGreaterThan(0);
      expect(loop.serverCpuMsPerStep).toBeGreaterThan(0);
    }
    expect(run.stdout).toMatch(/^HEAD .*\nworking tree .*\nfloor /m);
  }, 180_000);

  it('refuses a revision the repository does not have, naming it, before it starts a server', async () => {
    const run = await runEntry('bench/main.ts', ['--smoke', '--compare', 'no-such-revision'], {}, 60_000);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('bench: --compare no-such-revision: not a commit of this repository');
    expect(run.stderr).not.toContain('starting a dev server');
  }, 90_000);

  it('reads --compare, and refuses it without a revision', () => {
    expect(parseBenchArgs(['--compare', 'HEAD~1'])).toMatchObject({ compare: 'HEAD~1', replay: false });
    expect(() => parseBenchArgs(['--compare'])).toThrow(/--compare needs a git revision/);
  });
});

/** `bench/main.ts --smoke --compare REV --replay`, its exit status and output, and the comparison it wrote. */
async function replayComparison(rev: string, extra: string[] = []) {
  const file = path.join(tmpdir(), `bench-replay-compare-${randomUUID()}.json`);
  try {
    const run = await runEntry('bench/main.ts', ['--smoke', '--compare', rev, '--replay', '--out', file, ...extra], {}, 150_000);
    expect(run.code, run.stderr.slice(-2_000)).toBe(0);
    const { comparison } = JSON.parse(await readFile(file, 'utf8')) as { comparison: ReplayCompareResult };
    return { stdout: run.stdout, comparison };
  } finally {
    await rm(file, { force: true });
  }
}

describe('npm run bench -- --compare REV --replay', () => {
  it('replays every recorded history under both bundles, in blocks of each, and reports the CPU per replay', async () => {
    const { stdout, comparison } = await replayComparison('HEAD');
    const recorded = (await readdir(path.join(import.meta.dirname, 'fixtures', 'histories'))).filter((f) => f.endsWith('.json'));
    // HEAD's workflows replay every history the working tree's do: none is left out.
    expect(comparison.histories).toHaveLength(recorded.length);
    expect(comparison.skipped).toEqual([]);
    expect(comparison.blocks.rev).toHaveLength(2);
    expect(comparison.blocks.tree).toHaveLength(2);
    expect(comparison.medianCpuMs.rev).toBeGreaterThan(0);
    expect(comparison.medianCpuMs.tree).toBeGreaterThan(0);
    // Counted, not timed: a session's replay makes hundreds, under either bundle.
    expect(comparison.promisesPerReplay.rev).toBeGreaterThan(100);
    expect(comparison.promisesPerReplay.tree).toBeGreaterThan(100);
    expect(stdout).toMatch(/^HEAD .*\nworking tree .*\n {3}working tree ÷ HEAD: \d.*\n {3}promises the workflow creates per replay.*: HEAD \d+(\.\d)?, working tree \d/m);
  }, 180_000);

  it('replays the histories of --histories DIR, and leaves out by name one that a bundle does not replay', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'bench-histories-'));
    try {
      const golden = path.join(import.meta.dirname, 'fixtures', 'histories', 'normal-turn.json');
      await copyFile(golden, path.join(dir, 'normal-turn.json'));
      // A session of a workflow type neither bundle has, as a history of another program would be.
      const foreign = JSON.parse(await readFile(golden, 'utf8')) as { events: { workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } } }[] };
      const started = foreign.events[0]?.workflowExecutionStartedEventAttributes?.workflowType;
      if (!started) throw new Error('normal-turn.json does not start with its workflow type');
      started.name = 'notAnAgentSession';
      await writeFile(path.join(dir, 'foreign.json'), JSON.stringify(foreign));
      const { comparison } = await replayComparison('HEAD', ['--histories', dir]);
      expect(comparison.histories).toEqual(['normal-turn']);
      expect(comparison.skipped.map((s) => s.history)).toEqual(['foreign']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('judges each history of one replay worker alone: counts the promises of one it replays, names the error of one it does not', async () => {
    const golden = JSON.parse(await readFile(path.join(import.meta.dirname, 'fixtures', 'histories', 'normal-turn.json'), 'utf8')) as { events: { workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } } }[] };
    const foreign = structuredClone(golden);
    const started = foreign.events[0]?.workflowExecutionStartedEventAttributes?.workflowType;
    if (!started) throw new Error('normal-turn.json does not start with its workflow type');
    started.name = 'notAnAgentSession';
    const { code } = await workflowBundle();
    const histories = [golden, foreign, golden].map((h, i) => ({ workflowId: ['first', 'foreign', 'again'][i] as string, history: historyFromJSON(h) }));
    const counted = await countedReplays({ code, codePath: '' }, histories);
    expect(counted.get('foreign')?.error).toMatch(/notAnAgentSession/);
    // The same history twice, after a failed one: each count is its own replay's, not a running total.
    expect(counted.get('first')?.promises).toBeGreaterThan(100);
    expect(counted.get('again')?.promises).toBe(counted.get('first')?.promises);
  });

  it('is refused without --compare, and --histories without --replay', () => {
    expect(() => parseBenchArgs(['--replay'])).toThrow(/^bench: --replay goes with --compare REV/);
    expect(() => parseBenchArgs(['--compare', 'HEAD', '--histories', 'x'])).toThrow(/^bench: --histories goes with --compare REV --replay/);
  });
});
