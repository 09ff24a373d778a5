import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedWorkflowBundle, prune, workflowBundleKey } from '../harness/workflow-bundle-cache';

// Inside the project, so the bundler resolves @temporalio/workflow as it does for workflows/.
const DATA = path.join(import.meta.dirname, '..', '.data');
let dir: string;
beforeAll(async () => {
  await mkdir(DATA, { recursive: true });
  dir = await mkdtemp(path.join(DATA, 'bundle-cache-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A project of its own: a workflow that imports from contracts/, a lock file, and a client file the sandbox never sees. */
async function project(name: string, workflow = "import { greeting } from '../contracts/greeting';\nexport async function hello() { return greeting; }\n") {
  const root = path.join(dir, name);
  await mkdir(path.join(root, 'workflows'), { recursive: true });
  await mkdir(path.join(root, 'contracts'), { recursive: true });
  await mkdir(path.join(root, 'client'), { recursive: true });
  await writeFile(path.join(root, 'workflows', 'index.ts'), workflow);
  await writeFile(path.join(root, 'contracts', 'greeting.ts'), "export const greeting = 'hello';\n");
  await writeFile(path.join(root, 'client', 'main.ts'), 'export {};\n');
  await writeFile(path.join(root, 'package-lock.json'), '{"lockfileVersion":3}\n');
  return { root, workflowsPath: path.join(root, 'workflows', 'index.ts'), cacheDir: path.join(root, 'cache') };
}

describe('the shared workflow bundle cache', () => {
  it('gives an edited workflow or contract, and a new lock file, a key of their own; the edit undone finds the old key', async () => {
    const options = await project('keys');
    const key = await workflowBundleKey(options);
    const edited = async (file: string, content: string) => {
      const original = await readFile(path.join(options.root, file), 'utf8');
      await writeFile(path.join(options.root, file), content);
      const during = await workflowBundleKey(options);
      await writeFile(path.join(options.root, file), original);
      return during;
    };
    expect(await edited('workflows/index.ts', 'export async function hello() { return 1; }\n')).not.toBe(key);
    expect(await edited('contracts/greeting.ts', "export const greeting = 'hi';\n")).not.toBe(key);
    expect(await edited('package-lock.json', '{"lockfileVersion":3,"packages":{}}\n')).not.toBe(key);
    expect(await workflowBundleKey(options)).toBe(key);
    // Code the bundle cannot include leaves the key alone, and so does another project's key.
    await writeFile(path.join(options.root, 'client', 'main.ts'), 'export const changed = true;\n');
    expect(await workflowBundleKey(options)).toBe(key);
    expect(await workflowBundleKey({ ...options, workflowsPath: path.join(dir, 'elsewhere', 'workflows', 'index.ts') })).not.toBe(key);
  });

  it('reads the stored bundle of the same sources instead of bundling them', async () => {
    const options = await project('hit');
    await mkdir(options.cacheDir, { recursive: true });
    await writeFile(path.join(options.cacheDir, `${await workflowBundleKey(options)}.js`), '/* stored */');
    expect(await cachedWorkflowBundle(options)).toEqual({ code: '/* stored */' });
  });

  it('bundles sources it has not seen and stores the bundle, which the next process reads', async () => {
    const options = await project('miss');
    const bundle = await cachedWorkflowBundle(options);
    expect(bundle.code).toContain('hello');
    expect(await readdir(options.cacheDir)).toEqual([`${await workflowBundleKey(options)}.js`]);
    expect(await readFile(path.join(options.cacheDir, `${await workflowBundleKey(options)}.js`), 'utf8')).toBe(bundle.code);
  });

  it('refuses a bundle that includes a project file outside the folders its key covers', async () => {
    const options = await project('outside', "import { helper } from '../lib/helper';\nexport async function hello() { return helper(); }\n");
    await mkdir(path.join(options.root, 'lib'));
    await writeFile(path.join(options.root, 'lib', 'helper.ts'), "export const helper = () => 'hello';\n");
    await expect(cachedWorkflowBundle(options)).rejects.toThrow(/^the workflow bundle includes lib\/helper\.ts, outside workflows, contracts: add the folder to BUNDLED_DIRS/);
    await expect(readdir(options.cacheDir)).rejects.toThrow(/ENOENT/);
  });

  it('keeps the twelve most recently used bundles', async () => {
    const cacheDir = path.join(dir, 'prune');
    await mkdir(cacheDir);
    const names = Array.from({ length: 14 }, (_, i) => `bundle-${String(i).padStart(2, '0')}.js`);
    for (const [i, name] of names.entries()) {
      await writeFile(path.join(cacheDir, name), '');
      await utimes(path.join(cacheDir, name), 1_000 + i, 1_000 + i);
    }
    await prune(cacheDir);
    expect((await readdir(cacheDir)).sort()).toEqual(names.slice(2));
  });
});
