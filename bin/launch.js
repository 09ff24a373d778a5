// @ts-check
/**
 * The project's one launcher: how any of its programs runs. A product entry point
 * (`client/main`, `worker/main`) runs from `dist/` when `npm run build` made it and no
 * source changed since, and from the TypeScript sources otherwise; compiled, the CLI
 * starts in a fraction of the time, since tsx compiles every module on every start.
 *
 * As a program, `node bin/launch.js ENTRY[.ts] [ARG…]` runs any entry (the npm scripts,
 * the harness's child processes), and the entry sees the arguments it would see if
 * started directly (its own path as `process.argv[1]`). Sources run with tsx registered
 * in this thread only. Started with `--import tsx` instead, every thread would load tsx,
 * the SDK's workflow threads too, and tsx turns on source maps in each: Node then scans
 * every function the sandbox compiles for a source-map comment, and the SDK compiles two
 * for every promise a workflow makes. A production worker's workflow threads run without
 * that, so the tests' and the benchmark's worker processes do too.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.join(import.meta.dirname, '..');
/** What tsconfig.build.json compiles: a change in any of these makes dist/ stale. */
const SOURCE_DIRS = ['client', 'config', 'connection', 'contracts', 'encryption', 'tracing', 'worker', 'workflows', 'activities', 'testing', 'streaming', 'gateway'];
/** The package's root entry (index.ts), compiled with them. */
const SOURCE_FILES = ['index.ts'];
/** Written by scripts/build.ts when everything else is in place. */
export const STAMP = path.join(ROOT, 'dist', '.build-stamp');

/** @param {string} entry e.g. `client/main`, or a TypeScript file (`scripts/start.ts`) */
export async function launch(entry) {
  const file = entry.endsWith('.ts') ? path.resolve(entry) : entryToRun(entry);
  if (file.endsWith('.ts')) {
    const { register } = await import('tsx/esm/api');
    register();
  }
  await import(pathToFileURL(file).href);
}

/**
 * The compiled entry when it exists and the build is fresh, else the source.
 * @param {string} entry
 * @param {string} root the project folder (tests use a folder of their own)
 */
export function entryToRun(entry, root = ROOT) {
  const compiled = path.join(root, 'dist', `${entry}.js`);
  return existsSync(compiled) && isFresh(root) ? compiled : path.join(root, `${entry}.ts`);
}

/**
 * The build finished (its stamp is written last) after the newest source was changed.
 * @param {string} root
 */
export function isFresh(root = ROOT) {
  const stamp = path.join(root, 'dist', path.basename(STAMP));
  if (!existsSync(stamp)) return false;
  const built = statSync(stamp).mtimeMs;
  return [...SOURCE_DIRS, ...SOURCE_FILES].every((source) => newestTs(path.join(root, source)) <= built);
}

/** @param {string} dir */
function newestTs(dir) {
  if (!existsSync(dir)) return 0;
  if (dir.endsWith('.ts')) return statSync(dir).mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestTs(full));
    // An `assets/` folder's files (the chat page's) are copied into dist/ as they are.
    else if (entry.name.endsWith('.ts') || path.basename(dir) === 'assets') newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [, , entry] = process.argv;
  if (entry === undefined) throw new Error('usage: node bin/launch.js ENTRY[.ts] [ARG…]');
  process.argv.splice(1, 1);
  await launch(entry);
}
