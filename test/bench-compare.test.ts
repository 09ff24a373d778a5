import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { CompareResult } from '../bench/compare';
import { parseBenchArgs } from '../bench/options';
import { runEntry } from './support/cli';

/**
 * `npm run bench -- --quick --compare REV`: the session workflow of a revision beside the
 * working tree's and the floor, in one run. Timings here are noise; this checks that all
 * three loops ran the same turns and were measured.
 */
const out = path.join(tmpdir(), `bench-compare-${randomUUID()}.json`);
afterAll(() => rm(out, { force: true }));

describe('npm run bench -- --compare REV', () => {
  it('measures the workflow of a revision, the working tree\'s and the floor in the same rounds', async () => {
    const run = await runEntry('bench/main.ts', ['--quick', '--compare', 'HEAD', '--out', out], {}, 150_000);
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

  it('refuses a revision the repository does not have, naming it', async () => {
    const run = await runEntry('bench/main.ts', ['--quick', '--compare', 'no-such-revision'], {}, 60_000);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('bench: --compare no-such-revision: not a commit of this repository');
  }, 90_000);

  it('reads --compare, and refuses it without a revision', () => {
    expect(parseBenchArgs(['--compare', 'HEAD~1'])).toMatchObject({ compare: 'HEAD~1' });
    expect(() => parseBenchArgs(['--compare'])).toThrow(/--compare needs a git revision/);
  });
});
