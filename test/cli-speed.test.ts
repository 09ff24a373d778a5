/**
 * The compiled CLI (`npm run build`, `bin: agent`) starts fast: `agent --help` within
 * 300 ms and `agent list` against a local server within 1 s, measured as a whole process
 * from spawn to exit (median of 5), as the benchmark records them.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI_TARGETS, measureCliSpeed } from '../bench/cli-speed';
import { ensureBuilt } from '../scripts/build';
import { PROJECT_ROOT } from '../scripts/temporal-binaries';
import { devServerAddress, devServerNamespace } from './temporal-env';

const run = promisify(execFile);

describe('the compiled CLI', () => {
  it('is the package bin "agent", and npm run client / worker go through the launchers that prefer dist/', async () => {
    const pkg = JSON.parse(await readFile(path.join(PROJECT_ROOT, 'package.json'), 'utf8'));
    expect(pkg.bin).toEqual({ agent: 'bin/agent.js' });
    expect(pkg.scripts).toMatchObject({ client: 'node bin/agent.js', worker: 'node bin/worker.js', build: 'tsx scripts/build.ts' });
  });

  it('prints the same help compiled as from the sources, every command included', async () => {
    await ensureBuilt();
    const compiled = await run(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'agent.js'), '--help'], { cwd: PROJECT_ROOT });
    const fromSource = await run(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'client', 'main.ts'), '--help'], { cwd: PROJECT_ROOT });
    expect(compiled.stdout).toBe(fromSource.stdout);
    for (const command of ['start', 'send', 'run', 'watch', 'log', 'history', 'fork', 'cancel', 'retry-policy', 'approve', 'deny', 'list']) {
      expect(compiled.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    const sendHelp = await run(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'agent.js'), 'send', '--help'], { cwd: PROJECT_ROOT });
    expect(sendHelp.stdout).toMatch(/^usage: npm run client -- send <id> TEXT/);
  });

  it(`answers --help within ${CLI_TARGETS.agentHelpMs} ms and list within ${CLI_TARGETS.agentListMs} ms`, async () => {
    const speed = await measureCliSpeed({ address: devServerAddress(), namespace: devServerNamespace() });
    expect(speed.agentHelpMs).toBeLessThanOrEqual(CLI_TARGETS.agentHelpMs);
    expect(speed.agentListMs).toBeLessThanOrEqual(CLI_TARGETS.agentListMs);
    expect(speed.temporalHelpMs).toBeGreaterThan(0);
  }, 120_000);
});
