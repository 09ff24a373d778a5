/**
 * The compiled worker (`npm run build`, which `npm run worker` prefers) finds the modules
 * it hands to Temporal by path: the workflow code it bundles and, with encryption on, the
 * failure converter the bundle must include. Those paths are `.ts` beside the sources and
 * `.js` in `dist/`; a path that names the source file breaks every compiled worker.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DIST_DIR, ensureBuilt } from '../scripts/build';

const compiled = async <T>(module: string): Promise<T> => (await import(pathToFileURL(path.join(DIST_DIR, module)).href)) as T;

describe('the compiled worker', () => {
  it('bundles its workflows and the encrypting failure converter from files that exist in dist/', async () => {
    await ensureBuilt();
    const { WORKFLOWS_PATH } = await compiled<{ WORKFLOWS_PATH: string }>('worker/create-worker.js');
    const { FAILURE_CONVERTER_PATH } = await compiled<{ FAILURE_CONVERTER_PATH: string }>('encryption/data-converter.js');
    for (const file of [WORKFLOWS_PATH, FAILURE_CONVERTER_PATH]) {
      expect(file.startsWith(DIST_DIR + path.sep), file).toBe(true);
      expect(path.extname(file)).toBe('.js');
      expect(existsSync(file), file).toBe(true);
    }
  }, 180_000);
});
