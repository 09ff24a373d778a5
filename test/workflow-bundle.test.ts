import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { WORKFLOWS_PATH } from '../worker/create-worker';

const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

describe('the workflow sandbox bundle', () => {
  it('bundles workflows/ with nothing the sandbox forbids', async () => {
    const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: silent });
    expect(bundle.code).toContain('agentSession');
  });

  it('fails to bundle a workflow that imports a Node builtin, so such an import fails this suite', async () => {
    // Inside the project, so the bundler resolves @temporalio/workflow as it does for workflows/.
    await mkdir(path.join(import.meta.dirname, '..', '.data'), { recursive: true });
    const dir = await mkdtemp(path.join(import.meta.dirname, '..', '.data', 'bundle-probe-'));
    try {
      const clean = path.join(dir, 'clean.ts');
      const leaky = path.join(dir, 'leaky.ts');
      await writeFile(clean, "export async function tidy() { return 'ok'; }\n");
      await writeFile(leaky, "import { readFileSync } from 'node:fs';\nexport async function leaky() { return readFileSync('/etc/hostname', 'utf8'); }\n");
      // The same file without the import bundles, so the import alone is what fails.
      await expect(bundleWorkflowCode({ workflowsPath: clean, logger: silent })).resolves.toBeDefined();
      await expect(bundleWorkflowCode({ workflowsPath: leaky, logger: silent })).rejects.toThrow(/Webpack finished with errors/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
