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

  it('replays every recorded history without a determinism error (Worker.runReplayHistories over the folder)', async () => {
    const histories = await Promise.all(
      files.map(async (file) => ({ workflowId: path.basename(file, '.json'), history: historyFromJSON(JSON.parse(await readFile(path.join(HISTORIES, file), 'utf8'))) })),
    );
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories)) {
      replayed++;
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(files.length);
  });
});
