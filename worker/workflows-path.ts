import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** `.ts` beside the sources, `.js` in the build (dist/): the workflows are bundled from whichever this file is. */
export const WORKFLOWS_PATH = fileURLToPath(new URL(`../workflows/index${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url));
