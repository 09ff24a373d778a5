import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import type { Bundle } from './bundles';
import { countedReplays } from './promise-count';
import { median, round } from './stats';
import { revisionBundle } from './revision-bundle';
import { table } from './table';

const HISTORIES_DIR = path.join(PROJECT_ROOT, 'test', 'fixtures', 'histories');

export interface ReplayCompareSettings {
  /** Rounds of one block per bundle, in an order that flips each round. */
  rounds: number;
  /** Replays per block: the recorded histories, taken in turn. */
  replaysPerBlock: number;
}

export interface ReplayCompareResult {
  rev: string;
  commit: string;
  settings: ReplayCompareSettings;
  /** The recorded histories both bundles replay; the others are named with the error. */
  histories: string[];
  skipped: { history: string; error: string }[];
  /** Process CPU ms per replay, one figure per block. */
  blocks: { rev: number[]; tree: number[] };
  medianCpuMs: { rev: number; tree: number };
  /** Working tree ÷ revision. */
  ratio: number;
  /** Promises the workflow creates per replay of the histories (bench/promise-count.ts): the same on every run. */
  promisesPerReplay: { rev: number; tree: number };
}

type Named = { workflowId: string; history: ReturnType<typeof historyFromJSON> };

/**
 * `--compare REV --replay`: what the session workflow's own code costs at a revision against
 * the working tree, without a server. The recorded histories are replayed under each bundle
 * in blocks that alternate, and each block's process CPU per replay is its figure. A replay
 * runs what a live run runs in the sandbox (module set-up, the log, the scheduler, the
 * promises), with none of the server's, the activities' or the network's time, so a change
 * to workflows/ shows here when it is below what `--compare` resolves.
 */
export async function measureReplayComparison(rev: string, tree: Bundle, settings: ReplayCompareSettings, historiesDir = HISTORIES_DIR): Promise<ReplayCompareResult> {
  const { commit, bundle, remove } = await revisionBundle(rev);
  try {
    const recorded = await recordedHistories(historiesDir);
    const counted = { rev: await countedReplays(bundle, recorded), tree: await countedReplays(tree, recorded) };
    const skipped: ReplayCompareResult['skipped'] = [];
    const usable: Named[] = [];
    const promises = { rev: 0, tree: 0 };
    for (const named of recorded) {
      const [ofRev, ofTree] = [counted.rev.get(named.workflowId), counted.tree.get(named.workflowId)];
      if (ofRev?.promises !== undefined && ofTree?.promises !== undefined) {
        usable.push(named);
        promises.rev += ofRev.promises;
        promises.tree += ofTree.promises;
      } else skipped.push({ history: named.workflowId, error: ofRev?.error ?? ofTree?.error ?? 'no replay result' });
    }
    if (usable.length === 0) throw new Error(`bench: --compare ${rev} --replay: no recorded history replays under both bundles`);
    const bundles = { rev: bundle, tree };
    const promisesPerReplay = { rev: round(promises.rev / usable.length, 1), tree: round(promises.tree / usable.length, 1) };
    const blocks = { rev: [] as number[], tree: [] as number[] };
    for (let r = 0; r < settings.rounds; r++) {
      const order = r % 2 === 0 ? (['rev', 'tree'] as const) : (['tree', 'rev'] as const);
      for (const which of order) blocks[which].push(await cpuPerReplay(bundles[which], usable, settings.replaysPerBlock));
    }
    const medianCpuMs = { rev: round(median(blocks.rev), 2), tree: round(median(blocks.tree), 2) };
    return { rev, commit, settings, histories: usable.map((h) => h.workflowId), skipped, blocks, medianCpuMs, ratio: round(medianCpuMs.tree / medianCpuMs.rev, 3), promisesPerReplay };
  } finally {
    await remove();
  }
}

export function formatReplayComparison(result: ReplayCompareResult): string {
  const { rev, commit, settings, blocks, medianCpuMs, ratio, promisesPerReplay: promises } = result;
  const row = (name: string, figures: number[], med: number) => [name, med, round(Math.min(...figures), 1), round(Math.max(...figures), 1)];
  return [
    `Replay comparison: the session workflow of ${rev} (${commit.slice(0, 12)}) against the working tree's, ${result.histories.length} recorded histories replayed ${settings.replaysPerBlock} at a time, ${settings.rounds} blocks each in alternating order:`,
    table(['bundle', 'CPU ms / replay (median)', 'fastest block', 'slowest block'], [row(rev, blocks.rev, medianCpuMs.rev), row('working tree', blocks.tree, medianCpuMs.tree)]),
    `   working tree ÷ ${rev}: ${ratio}`,
    `   promises the workflow creates per replay, each given a stack trace by the SDK (the same on every run): ${rev} ${promises.rev}, working tree ${promises.tree}`,
    ...(result.skipped.length === 0 ? [] : [`   not replayed by both (left out): ${result.skipped.map((s) => s.history).join(', ')}`]),
  ].join('\n');
}

async function recordedHistories(dir: string): Promise<Named[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(
    files.map(async (file) => ({ workflowId: path.basename(file, '.json'), history: historyFromJSON(JSON.parse(await readFile(path.join(dir, file), 'utf8'))) })),
  );
}

/** One block: `count` replays, the histories in turn, and the process's CPU per replay. */
async function cpuPerReplay(bundle: Bundle, histories: readonly Named[], count: number): Promise<number> {
  // One replay worker runs the whole block. Each history under its file's name, the id it was
  // recorded under: a sub-agent's child id is derived from its parent's, so another id replays
  // another child (a replay worker takes one id many times, one run after another).
  const batch = Array.from({ length: count }, (_, i) => histories[i % histories.length] as Named);
  const before = process.cpuUsage();
  for await (const result of Worker.runReplayHistories({ workflowBundle: { code: bundle.code } }, batch)) {
    if (result.error) throw new Error(`bench: replaying ${result.workflowId} failed: ${result.error.message}`);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / count;
}
