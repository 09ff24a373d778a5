import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/**
 * A fresh folder for the calling test file: made in a `beforeAll`, removed with its
 * contents in an `afterAll`. Register it before a harness that needs it, so the harness
 * starts after the folder exists and stops before the folder goes.
 */
export function useTempDir(prefix: string): () => string {
  let dir: string | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), prefix));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return () => {
    if (!dir) throw new Error(`the temporary folder ${prefix}… is used before its beforeAll made it`);
    return dir;
  };
}
