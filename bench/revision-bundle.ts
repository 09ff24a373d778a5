import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { store } from '../harness/workflow-bundle-cache';
import { bundleTo, type Bundle } from './bundles';

const run = promisify(execFile);

/**
 * Bundles made of a commit, kept between runs: a commit's workflows never change, and with
 * the same package-lock.json (the SDK and the libraries the bundle pulls in) webpack makes
 * the same bundle of them, so a second comparison with one revision skips seconds of it.
 */
const CACHE_DIR = path.join(PROJECT_ROOT, 'node_modules', '.cache', 'durable-agent-worker', 'revision-bundles');

/** The workflow bundle of a git revision, and the tree it was built from until `remove`. */
export interface RevisionBundle {
  /** The commit the revision names. */
  commit: string;
  bundle: Bundle;
  remove(): Promise<void>;
}

/**
 * Bundles the workflows of a revision, or takes the bundle an earlier run made of the same
 * commit: its tree is extracted inside the project, so its imports of zod and the SDK
 * resolve from the project's node_modules as the working tree's do. An unknown revision
 * is a one-line error.
 */
export async function revisionBundle(rev: string): Promise<RevisionBundle> {
  const commit = await commitOf(rev);
  const lock = createHash('sha256').update(await readFile(path.join(PROJECT_ROOT, 'package-lock.json'))).digest('hex').slice(0, 16);
  const cached = path.join(CACHE_DIR, `${commit}-${lock}.js`);
  const code = await readFile(cached, 'utf8').catch(() => undefined);
  if (code !== undefined) return { commit, bundle: { code, codePath: cached }, remove: async () => {} };
  // A folder of its own: two comparisons of one revision at once must not share a tree.
  await mkdir(path.join(PROJECT_ROOT, '.data'), { recursive: true });
  const dir = await mkdtemp(path.join(PROJECT_ROOT, '.data', `compare-${commit.slice(0, 12)}-`));
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    const archive = path.join(dir, 'tree.tar');
    await run('git', ['archive', '--format=tar', '-o', archive, commit], { cwd: PROJECT_ROOT });
    await run('tar', ['-xf', archive, '-C', dir]);
    const bundle = await bundleTo(path.join(dir, 'workflows', 'index.ts'), path.join(dir, 'bundle.js'));
    await store(CACHE_DIR, cached, bundle.code);
    return { commit, bundle, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

/** The commit a revision names; an unknown one is the one-line error `--compare` prints. */
export async function commitOf(rev: string): Promise<string> {
  const { stdout } = await run('git', ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { cwd: PROJECT_ROOT }).catch(() => {
    throw new Error(`bench: --compare ${rev}: not a commit of this repository`);
  });
  return stdout.trim();
}
