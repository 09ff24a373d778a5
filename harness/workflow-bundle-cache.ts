/**
 * The session workflow's bundle, made once per content of the code it is made of rather
 * than once per process. Webpack takes seconds for it on two cores, and a test run starts
 * dozens of test files that each need the same one; the first to ask bundles and stores it,
 * the others read it. The key is a hash of everything the bundle can contain (every file
 * of the folders the sandbox's code comes from, and package-lock.json for the SDK and the
 * libraries it pulls in) and of where the workflows are: an edit to a workflow (as a
 * mutation trial makes) gets a bundle of its own, and the same edit undone finds the old one.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';

/**
 * Where the bundle's project code lives; eslint keeps workflows/ and contracts/ from
 * importing anything else, and `bundledSourcesOutside` checks each new bundle for it.
 */
export const BUNDLED_DIRS = ['workflows', 'contracts'];
/** Enough for a mutation check's trials beside the unbroken tree; each bundle is a few MB. */
const KEPT_BUNDLES = 12;

export interface BundleCacheOptions {
  /** The project folder: BUNDLED_DIRS and package-lock.json are read from it. */
  root: string;
  /** The workflows' entry file (worker/create-worker.ts's WORKFLOWS_PATH). */
  workflowsPath: string;
  /** Where the bundles are kept (node_modules/.cache/… of the project). */
  cacheDir: string;
}

const quietLogger = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };

/** The stored bundle for the current sources, or a new one bundled and stored. */
export async function cachedWorkflowBundle(options: BundleCacheOptions): Promise<WorkflowBundle> {
  return { code: (await cachedBundle(options)).code };
}

/**
 * The stored bundle's file for the current sources (bundled and stored first if need be),
 * for a worker process to run (AGENT_WORKFLOW_BUNDLE); undefined when the sources changed
 * while webpack read them, and no file matches them.
 */
export async function cachedWorkflowBundleFile(options: BundleCacheOptions): Promise<string | undefined> {
  return (await cachedBundle(options)).file;
}

async function cachedBundle(options: BundleCacheOptions): Promise<{ code: string; file?: string }> {
  const key = await workflowBundleKey(options);
  const file = path.join(options.cacheDir, `${key}.js`);
  const stored = await readFile(file, 'utf8').catch(() => undefined);
  if (stored !== undefined) {
    // Its time says when it was last used: pruning keeps the recently used ones.
    const now = new Date();
    await utimes(file, now, now).catch(() => undefined);
    return { code: stored, file };
  }
  const { code } = await bundleWorkflowCode({ workflowsPath: options.workflowsPath, logger: quietLogger });
  const outside = bundledSourcesOutside(code, options.root);
  if (outside.length > 0) {
    throw new Error(`the workflow bundle includes ${outside.join(', ')}, outside ${BUNDLED_DIRS.join(', ')}: add the folder to BUNDLED_DIRS in harness/workflow-bundle-cache.ts so its edits change the bundle's key`);
  }
  // A file edited while webpack read it would leave a bundle that matches neither content.
  if ((await workflowBundleKey(options)) !== key) return { code };
  await store(options.cacheDir, file, code);
  return { code, file };
}

/** A hash of the entry's path, package-lock.json and every file (path and content) of BUNDLED_DIRS. */
export async function workflowBundleKey(options: Pick<BundleCacheOptions, 'root' | 'workflowsPath'>): Promise<string> {
  const hash = createHash('sha256');
  const add = (name: string, content: string | Buffer) => hash.update(`${name}\0${content.length}\0`).update(content);
  add('workflowsPath', options.workflowsPath);
  add('package-lock.json', await readFile(path.join(options.root, 'package-lock.json')));
  for (const dir of BUNDLED_DIRS) {
    for (const file of await filesUnder(path.join(options.root, dir))) add(path.relative(options.root, file), await readFile(file));
  }
  return hash.digest('hex').slice(0, 32);
}

/**
 * The project files the bundle is made of (its inline source map names each) that lie
 * outside BUNDLED_DIRS: an edit to one of those would not change the key.
 */
export function bundledSourcesOutside(code: string, root: string): string[] {
  const map = /sourceMappingURL=data:application\/json;[^,]*base64,([A-Za-z0-9+/=]+)\s*$/.exec(code);
  if (!map?.[1]) throw new Error('the workflow bundle has no inline source map to tell which files it includes');
  const sources = (JSON.parse(Buffer.from(map[1], 'base64').toString('utf8')) as { sources: string[] }).sources;
  const inside = BUNDLED_DIRS.map((dir) => path.join(root, dir) + path.sep);
  return sources
    .filter((source) => source.startsWith(root) && !source.includes(`${path.sep}node_modules${path.sep}`))
    .filter((source) => !inside.some((dir) => source.startsWith(dir)))
    .map((source) => path.relative(root, source));
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

/** Written under a name of its own and renamed: a reader in another process sees all of it or none. */
export async function store(cacheDir: string, file: string, code: string): Promise<void> {
  await mkdir(cacheDir, { recursive: true });
  const partial = `${file}.${randomUUID()}.partial`;
  await writeFile(partial, code);
  await rename(partial, file);
  await prune(cacheDir);
}

/** Keeps the KEPT_BUNDLES most recently used bundles; another process's removal is no error. */
export async function prune(cacheDir: string): Promise<void> {
  const bundles = (await readdir(cacheDir)).filter((name) => name.endsWith('.js'));
  const used = await Promise.all(bundles.map(async (name) => ({ name, at: await stat(path.join(cacheDir, name)).then((s) => s.mtimeMs, () => 0) })));
  const old = used.sort((a, b) => b.at - a.at).slice(KEPT_BUNDLES);
  await Promise.all(old.map(({ name }) => rm(path.join(cacheDir, name), { force: true })));
}
