import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowBundle } from '../scripts/local-agent';
import { GOLDEN_SHAPES } from './support/golden-shapes';

const HISTORIES = path.join(import.meta.dirname, 'fixtures', 'histories');
const files = (await readdir(HISTORIES)).filter((f) => f.endsWith('.json')).sort();

describe('recorded histories replay against the current workflows', () => {
  it('has a recording of every workflow shape', () => {
    expect(files).toEqual(expect.arrayContaining(GOLDEN_SHAPES.map((shape) => `${shape}.json`)));
  });

  it.each(files)('replays %s without a determinism error', async (file) => {
    const history = historyFromJSON(JSON.parse(await readFile(path.join(HISTORIES, file), 'utf8')));
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, path.basename(file, '.json'));
  });
});
