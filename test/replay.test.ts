import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowBundle } from '../harness/local-agent';
import { COMPACTING_SHAPES, GOLDEN_SHAPES } from './support/golden-shapes';
import { updateBesideCommand } from '../harness/update-beside-command';

const HISTORIES = path.join(import.meta.dirname, 'fixtures', 'histories');
const files = (await readdir(HISTORIES)).filter((f) => f.endsWith('.json')).sort();

describe('recorded histories replay against the current workflows', () => {
  it('has a recording of every workflow shape', () => {
    expect(files).toEqual(expect.arrayContaining(GOLDEN_SHAPES.map((shape) => `${shape}.json`)));
  });

  // The unmarked ones are the sessions recorded before compaction: the replay below proves
  // they replay through patched()'s false side (no compaction call, the whole log carried).
  it('keeps sessions recorded before compaction existed (no context-compaction patch marker), and records the marker where a session compacted', async () => {
    const marked = await Promise.all(files.map(async (file) => [path.basename(file, '.json'), hasPatchMarker(await readFile(path.join(HISTORIES, file), 'utf8'), 'context-compaction')] as const));
    const withMarker = marked.filter(([, has]) => has).map(([shape]) => shape);
    expect(withMarker).toEqual(expect.arrayContaining([...COMPACTING_SHAPES]));
    expect(marked.filter(([, has]) => !has).map(([shape]) => shape)).toEqual(expect.arrayContaining(['normal-turn', 'continue-as-new', 'step-limit-default-10']));
  });

  // The approval sessions recorded before replay through the patch's false side: waits and
  // keys by call id alone, as those sessions had them.
  it('keeps approval sessions recorded before calls were keyed by their position (no call-position-keys marker), and records the marker where a later turn reused a call id', async () => {
    const marked = async (shape: string) => hasPatchMarker(await readFile(path.join(HISTORIES, `${shape}.json`), 'utf8'), 'call-position-keys');
    expect(await marked('approval-reused-call-id')).toBe(true);
    for (const shape of ['approval', 'approval-denied', 'approval-timed-out', 'compensated-turn']) expect(await marked(shape), shape).toBe(false);
  });

  // The MCP session recorded before replays through the patch's false side (the workflow
  // checked the arguments itself); only a read-only call a pattern names asks the other patch.
  it('keeps the MCP session recorded before the worker checked MCP arguments (no mcp-arguments-checked-by-worker marker), and records the marker where an invalid call went to callMcpTool', async () => {
    const read = (shape: string) => readFile(path.join(HISTORIES, `${shape}.json`), 'utf8');
    expect(hasPatchMarker(await read('mcp-invalid-arguments'), 'mcp-arguments-checked-by-worker')).toBe(true);
    expect(await read('mcp-invalid-arguments')).toContain('"callMcpTool"');
    expect(hasPatchMarker(await read('mcp-tools'), 'mcp-arguments-checked-by-worker')).toBe(false);
  });

  it('records the approval-in-either-lane marker where a read-only call a pattern names waited, and not where only side-effecting calls waited', async () => {
    const marked = async (shape: string) => hasPatchMarker(await readFile(path.join(HISTORIES, `${shape}.json`), 'utf8'), 'approval-in-either-lane');
    expect(await marked('approval-read-only-named')).toBe(true);
    for (const shape of ['approval', 'approval-denied', 'approval-timed-out', 'approval-reused-call-id']) expect(await marked(shape), shape).toBe(false);
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

/** Whether the exported history recorded `patched(patchId)` returning true (core's `core_patch` marker). */
function hasPatchMarker(json: string, patchId: string): boolean {
  const { events } = JSON.parse(json) as { events: { markerRecordedEventAttributes?: { markerName?: string; details?: Record<string, { payloads?: { data?: string }[] }> } }[] };
  return events.some(({ markerRecordedEventAttributes: marker }) => {
    if (marker?.markerName !== 'core_patch') return false;
    const data = marker.details?.['patch-data']?.payloads?.[0]?.data;
    return data !== undefined && (JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { id?: string }).id === patchId;
  });
}
