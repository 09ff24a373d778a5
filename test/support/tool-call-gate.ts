import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One report of a tool's run, as the tools of test/support/custom-tools-worker.ts send it. */
export interface GatedRun {
  /** `run` when the tool starts; `aborted` when it saw its signal abort. */
  event: string;
  pid: number;
  tool: string;
  callId: string;
  idempotencyKey: string;
  input: unknown;
  /** The most runs held open at once while this one was (1: it ran alone; 0: not held). */
  atOnce: number;
}

export interface ToolCallGate {
  /** `http://127.0.0.1:PORT`, for `CUSTOM_TOOLS_GATE`. */
  url: string;
  /** Every report, in the order they came, from every worker process. */
  readonly runs: readonly GatedRun[];
  /**
   * Holds each run of `tool` until `untilOpen` runs are open at once or `atMostMs` pass: long
   * enough that runs which may overlap do, and so show it.
   */
  hold(tool: string, rule: { untilOpen?: number; atMostMs: number }): void;
  close(): Promise<void>;
}

/**
 * What the tools of worker PROCESSES did, seen from one place: each run reports itself over
 * HTTP before it goes on, so a test sees which calls ran, where, with which key, in which
 * order and which of them at once, whichever process took them.
 */
export async function startToolCallGate(): Promise<ToolCallGate> {
  const runs: GatedRun[] = [];
  const open = new Set<GatedRun>();
  const rules = new Map<string, { untilOpen?: number; atMostMs: number }>();
  const waiting = new Set<() => void>();

  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const run: GatedRun = { ...(JSON.parse(body) as Omit<GatedRun, 'event' | 'atOnce'>), event: (request.url ?? '').slice(1), atOnce: 0 };
      runs.push(run);
      const rule = run.event === 'run' ? rules.get(run.tool) : undefined;
      if (!rule) {
        response.end();
        return;
      }
      open.add(run);
      for (const held of open) held.atOnce = Math.max(held.atOnce, open.size);
      const release = () => {
        clearTimeout(timer);
        waiting.delete(release);
        open.delete(run);
        response.end();
      };
      const timer = setTimeout(release, rule.atMostMs);
      waiting.add(release);
      // Enough runs at once: every held one goes on.
      if (rule.untilOpen !== undefined && open.size >= rule.untilOpen) for (const next of [...waiting]) next();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    runs,
    hold: (tool, rule) => rules.set(tool, rule),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
