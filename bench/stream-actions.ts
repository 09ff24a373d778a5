import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import path from 'node:path';
import { findFreePort, startDevServer, type DevServer } from '../harness/dev-server';
import { RESULTS_DIR } from './bench-env';

/**
 * Billable actions as the Temporal server counts them: its `action` counter (the one Temporal
 * Cloud bills from), which a dev server started with `--metrics-port` serves in Prometheus'
 * text format, one series per `action_type` (`grpc_QueryWorkflow`, `grpc_RecordActivityTaskHeartbeat`,
 * `command_ScheduleActivityTask`, …) and namespace.
 */
export type ActionCounts = Record<string, number>;

/** The namespace's `action` series, summed by `action_type`. */
export function parseActionCounts(metricsText: string, namespace: string): ActionCounts {
  const counts: ActionCounts = {};
  for (const line of metricsText.split('\n')) {
    const match = /^action\{([^}]*)\} (\S+)$/.exec(line);
    if (!match) continue;
    const labels = match[1] as string;
    if (!labels.includes(`namespace="${namespace}"`)) continue;
    const type = /action_type="([^"]+)"/.exec(labels)?.[1] ?? 'unknown';
    counts[type] = (counts[type] ?? 0) + Number(match[2]);
  }
  return counts;
}

/** What was counted between two readings, by type, the types that did not move left out. */
export function actionsBetween(before: ActionCounts, after: ActionCounts): ActionCounts {
  const out: ActionCounts = {};
  for (const [type, n] of Object.entries(after)) {
    const moved = n - (before[type] ?? 0);
    if (moved > 0) out[type] = moved;
  }
  return out;
}

export function totalActions(counts: ActionCounts): number {
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

/** How often the meter reads the counter while it waits for its mark, and for how long at most. */
const MARK_READ_MS = 100;
const MARK_TIMEOUT_MS = 15_000;
/** Nothing of the agent signals a workflow: the mark's action type is the meter's alone. */
const MARK_TYPE = 'grpc_SignalWorkflowExecution';

/**
 * Reads the counter up to now. The server publishes its metrics on an interval (about a
 * second), so a reading taken at once can miss the last actions: the meter signals a
 * workflow of its own (on a task queue no worker polls, so the signal costs that one
 * action and nothing more) and reads until that signal is counted, which is after
 * everything counted before it. Its own signals are taken out of what it reports.
 */
export interface ActionMeter {
  read(): Promise<ActionCounts>;
}

export async function openActionMeter(client: Client, metricsUrl: string, namespace: string): Promise<ActionMeter> {
  const mark = await client.workflow.start('bench-action-mark', { taskQueue: `bench-action-mark-${randomUUID()}`, workflowId: `bench-action-mark-${randomUUID()}` });
  let marks = 0;
  return {
    async read() {
      await mark.signal('mark');
      marks++;
      for (const deadline = Date.now() + MARK_TIMEOUT_MS; ; ) {
        const counts = await readActions(metricsUrl, namespace);
        if ((counts[MARK_TYPE] ?? 0) >= marks) {
          const others = (counts[MARK_TYPE] ?? 0) - marks;
          const { [MARK_TYPE]: _mark, ...rest } = counts;
          return others > 0 ? { ...rest, [MARK_TYPE]: others } : rest;
        }
        if (Date.now() > deadline) throw new Error(`the dev server's action counter did not count the meter's signal within ${MARK_TIMEOUT_MS} ms (${metricsUrl})`);
        await sleep(MARK_READ_MS);
      }
    },
  };
}

async function readActions(metricsUrl: string, namespace: string): Promise<ActionCounts> {
  const response = await fetch(metricsUrl);
  if (!response.ok) throw new Error(`the dev server's metrics at ${metricsUrl} answered ${response.status}`);
  return parseActionCounts(await response.text(), namespace);
}

/** A private dev server serving its `action` counter (`--metrics-port`), its log in bench/results/, and where to read the counter. */
export async function startMeteredDevServer(): Promise<{ server: DevServer; metricsUrl: string }> {
  const metricsPort = await findFreePort();
  const server = await startDevServer({
    ip: '127.0.0.1',
    port: await findFreePort(),
    uiPort: false,
    extraArgs: ['--metrics-port', String(metricsPort)],
    output: { file: path.join(RESULTS_DIR, 'temporal-dev-server.log') },
  });
  return { server, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` };
}
