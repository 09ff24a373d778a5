// @ts-check
/**
 * Runs a project entry point (`client/main`, `worker/main`) from `dist/` when `npm run
 * build` made it and no source changed since, and from the TypeScript sources through
 * tsx otherwise. Compiled, the CLI starts in a fraction of the time: tsx compiles every
 * module on every start.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.join(import.meta.dirname, '..');
/** What tsconfig.build.json compiles: a change in any of these makes dist/ stale. */
const SOURCE_DIRS = ['client', 'config', 'connection', 'contracts', 'encryption', 'worker', 'workflows', 'activities'];
/** Written by scripts/build.ts when everything else is in place. */
export const STAMP = path.join(ROOT, 'dist', '.build-stamp');

/** @param {string} entry e.g. `client/main` */
export async function launch(entry) {
  const file = entryToRun(entry);
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
  return SOURCE_DIRS.every((dir) => newestTs(path.join(root, dir)) <= built);
}

/** @param {string} dir */
function newestTs(dir) {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestTs(full));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}
