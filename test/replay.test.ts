import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowBundle } from '../harness/local-agent';
import { GOLDEN_SHAPES } from './support/golden-shapes';
import { updateBesideCommand } from '../harness/update-beside-command';

const HISTORIES = path.join(import.meta.dirname, 'fixtures', 'histories');
const files = (await readdir(HISTORIES)).filter((f) => f.endsWith('.json')).sort();

describe('recorded histories replay against the current workflows', () => {
  it('has a recording of every workflow shape', () => {
    expect(files).toEqual(expect.arrayContaining(GOLDEN_SHAPES.map((shape) => `${shape}.json`)));
  });

  // What a change to when a step issues its commands (fewer awaits, say) must still replay:
  // an Update's answer and a step's next command out of one activation, in the recorded order.
  it('keeps a recording where an Update is answered in the workflow task that schedules a step\'s next LLM call', async () => {
    const read = (shape: string) => readFile(path.join(HISTORIES, `${shape}.json`), 'utf8');
    expect(updateBesideCommand(await read('update-beside-tool-result'))).toBe(true);
    expect(updateBesideCommand(await read('normal-turn'))).toBe(false);
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
