import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { BenchEnv } from './bench-env';
import { round } from './stats';
import { endSession, runSessionTurn } from './temporal-runs';
import type { BenchWorker } from './worker-handle';

export interface HistoryPoint {
  steps: number;
  events: number;
  /** Length of the history as JSON (`historyToJSON`, what `exportHistory` writes and the UI downloads). */
  bytes: number;
  bytesPerStep: number;
}

export interface EventTypeShare {
  eventType: string;
  count: number;
  bytes: number;
}

export interface HistoryGrowthResult {
  points: HistoryPoint[];
  /** bytes(top) / bytes(base): linear growth gives about top/base, quadratic (top/base)². */
  ratio: { base: number; top: number; value: number; linear: number; quadratic: number };
  /** Bytes added per step between the two smallest and between the two largest sessions: equal when growth is linear. */
  marginalBytesPerStep: { first: number; last: number };
  /** Where the largest session's bytes are, by event type, largest first. */
  breakdown: EventTypeShare[];
}

export interface LongSession {
  workflowId: string;
  steps: number;
  /** Its full history after `end`, as JSON: the input of the replay benchmark. */
  historyJson: string;
}

/** The session's history, open or closed, as `historyToJSON` writes it. */
async function historyJson(handle: WorkflowHandle): Promise<string> {
  return historyToJSON(await handle.fetchHistory());
}

/**
 * Benchmark 3: one session per length, each running a single turn of that many steps; the
 * history is measured when the turn has ended and the session waits for its next message.
 * The longest session is then ended and kept for the replay benchmark.
 */
export async function measureHistoryGrowth(
  env: BenchEnv,
  worker: BenchWorker,
  settings: { steps: number[]; ratioBase: number; ratioTop: number },
): Promise<{ result: HistoryGrowthResult; longest: LongSession }> {
  const steps = [...settings.steps].sort((a, b) => a - b);
  if (!steps.includes(settings.ratioBase) || !steps.includes(settings.ratioTop)) throw new Error('bench: the history ratio needs sessions of both of its lengths');
  const points: HistoryPoint[] = [];
  let longest: LongSession | undefined;
  let breakdown: EventTypeShare[] = [];
  for (const n of steps) {
    const { handle, runId } = await runSessionTurn(env.client, env.llm, worker.taskQueue, n, 'history');
    const run = env.client.workflow.getHandle(handle.workflowId, runId);
    const json = await historyJson(run);
    const events = (JSON.parse(json) as { events: Record<string, unknown>[] }).events;
    points.push({ steps: n, events: events.length, bytes: json.length, bytesPerStep: round(json.length / n, 1) });
    await endSession(handle);
    if (n === steps[steps.length - 1]) {
      breakdown = byEventType(events);
      await handle.result();
      longest = { workflowId: handle.workflowId, steps: n, historyJson: await historyJson(run) };
    }
  }
  const at = (n: number) => points.find((p) => p.steps === n) as HistoryPoint;
  const marginal = (a: HistoryPoint, b: HistoryPoint) => round((b.bytes - a.bytes) / (b.steps - a.steps), 1);
  const [p0, p1] = points;
  const [q0, q1] = points.slice(-2);
  return {
    result: {
      points,
      ratio: {
        base: settings.ratioBase,
        top: settings.ratioTop,
        value: round(at(settings.ratioTop).bytes / at(settings.ratioBase).bytes),
        linear: round(settings.ratioTop / settings.ratioBase),
        quadratic: round((settings.ratioTop / settings.ratioBase) ** 2),
      },
      marginalBytesPerStep: { first: p0 && p1 ? marginal(p0, p1) : 0, last: q0 && q1 ? marginal(q0, q1) : 0 },
      breakdown,
    },
    longest: longest as LongSession,
  };
}

function byEventType(events: readonly Record<string, unknown>[]): EventTypeShare[] {
  const shares = new Map<string, EventTypeShare>();
  for (const event of events) {
    const eventType = String(event.eventType ?? 'unknown').replace(/^EVENT_TYPE_/, '');
    const share = shares.get(eventType) ?? { eventType, count: 0, bytes: 0 };
    share.count++;
    share.bytes += JSON.stringify(event).length;
    shares.set(eventType, share);
  }
  return [...shares.values()].sort((a, b) => b.bytes - a.bytes);
}
