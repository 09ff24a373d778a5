/**
 * `npm run soak`: many sessions through a scripted mix of failures (429s with waits, 529s,
 * truncated and broken streams, stalls, tool timeouts, worker restarts) against a real
 * Temporal server, then a report: sessions run, attempts, failures by type, and lost data,
 * which must be 0. Loopback only: the scripted LLM, the HTTP target and (unless
 * TEMPORAL_ADDRESS is given) a private in-memory dev server all listen on 127.0.0.1.
 *
 * Bounded both ways: no new session starts after `--duration`, at most `--sessions` run, and
 * whatever has not finished `--grace` later counts as stuck (and fails the run).
 *
 *   npm run soak                      # 5 minutes, worker processes killed with SIGKILL
 *   npm run soak -- --profile ci      # the short run test/soak.test.ts makes
 *   npm run soak -- --sessions 500 --duration 900 --concurrency 12 --seed 42
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { endSession, readLog, sendAndWait, startSession, type SessionHandle } from '../client/sessions';
import type { RetryPolicy } from '../contracts/retry-policy';
import type { SessionEvent } from '../contracts/session-log';
import { startHttpTarget, type HttpTarget } from '../harness/http-target';
import { findFreePort, startDevServer, type DevServer } from '../harness/dev-server';
import { duplicateSideEffects, sessionViolations, type SessionEvidence } from './soak/invariants';
import { startSoakRig, type SoakRig, type WorkerMode } from './soak/rig';
import { planSession, SCENARIOS, seededRandom } from './soak/scenarios';

export const SoakOptionsSchema = z.object({
  /** `host:port` of a Temporal server; default: a private in-memory dev server. */
  address: z.string().optional(),
  namespace: z.string().default('default'),
  /** At most this many sessions. */
  sessions: z.number().int().min(1).max(10_000),
  /** No session starts after this. */
  durationMs: z.number().int().min(1_000).max(24 * 3600_000),
  /** How long sessions in flight may take to finish after `durationMs` before they count as stuck. */
  graceMs: z.number().int().min(1_000).max(3600_000).default(120_000),
  concurrency: z.number().int().min(1).max(64),
  /** Each session sends between 1 and this many messages. */
  maxTurns: z.number().int().min(1).max(20).default(3),
  workers: z.enum(['in-process', 'process']),
  /** A worker restart every this often, at most `maxRestarts` times. */
  restartEveryMs: z.number().int().min(1_000),
  maxRestarts: z.number().int().min(0).max(1_000),
  seed: z.number().int().default(() => Math.floor(Math.random() * 2 ** 31)),
});
export type SoakOptions = z.input<typeof SoakOptionsSchema>;

/** Short waits, so a failure mix costs seconds, not the product ladder's minutes. */
const SOAK_RETRY_POLICY: RetryPolicy = { maxRetries: 3, baseDelayMs: 200, maxDelayMs: 1_000, budgetMs: 30_000, maxServerWaitMs: 5_000 };
/** The provider's silence that counts as a dead stream: the `silent_stall` scenario exceeds it. */
const LLM_IDLE_TIMEOUT_MS = 1_500;
/** http_request's startToClose for soak sessions: the `*_tool_timeout` scenarios exceed it. */
const TOOL_TIMEOUT_MS = 2_000;
const PROVIDERS = ['anthropic', 'openai', 'google'] as const;

export interface SoakReport {
  seed: number;
  workers: WorkerMode;
  durationMs: number;
  sessions: number;
  turns: number;
  turnsByStatus: Record<string, number>;
  /** Why failed turns failed, by stable type. */
  turnFailures: Record<string, number>;
  /** Turns per scenario, and how many ended otherwise than the scenario alone would make them (restarts do that). */
  scenarios: Record<string, { turns: number; unexpected: number }>;
  /** LLM requests (one per attempt) by what the scripted LLM played. */
  llmAttempts: Record<string, number>;
  /** Tool results by code. */
  toolResults: Record<string, number>;
  /** Requests the HTTP target saw, and how many of them were side-effecting. */
  targetRequests: { total: number; sideEffecting: number };
  workerRestarts: number;
  /** Sessions still running at the deadline. */
  stuck: number;
  /** Every violation of "nothing lost": must be empty. */
  lostData: string[];
}

const bump = (counts: Record<string, number>, key: string, by = 1) => {
  counts[key] = (counts[key] ?? 0) + by;
};

export async function runSoak(input: SoakOptions, log: (line: string) => void = () => {}): Promise<SoakReport> {
  const o = SoakOptionsSchema.parse(input);
  const started = Date.now();
  const startBy = started + o.durationMs;
  const deadline = startBy + o.graceMs;
  const stops: (() => Promise<void>)[] = [];

  let server: DevServer | undefined;
  let target: HttpTarget | undefined;
  let rig: SoakRig | undefined;
  try {
    if (!o.address) {
      server = await startDevServer({ ip: '127.0.0.1', port: await findFreePort(), uiPort: false, output: 'ignore' });
      stops.push(() => server?.stop() ?? Promise.resolve());
    }
    const address = o.address ?? server?.address ?? '';
    target = await startHttpTarget((request) => (request.path.startsWith('/hang/') ? 'hold' : { status: request.method === 'POST' ? 201 : 200, body: 'ok' }));
    rig = await startSoakRig({
      address,
      namespace: o.namespace,
      mode: o.workers,
      env: { AGENT_HTTP_ALLOWLIST: target.host, AGENT_LLM_IDLE_TIMEOUT_MS: String(LLM_IDLE_TIMEOUT_MS) },
    });
    log(`soak: seed ${o.seed}, ${o.workers} workers, up to ${o.sessions} sessions over ${o.durationMs / 1000} s, ${o.concurrency} at a time`);

    const run = randomUUID().slice(0, 8);
    const evidence: SessionEvidence[] = [];
    const scenarioStats: SoakReport['scenarios'] = {};
    const turnsByStatus: Record<string, number> = {};
    const turnFailures: Record<string, number> = {};
    const models: string[] = [];
    let launched = 0;
    let stuck = 0;

    const timeLeft = <T>(work: Promise<T>, what: string): Promise<T> =>
      Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: still waiting at the soak's deadline`)), Math.max(0, deadline - Date.now())).unref())]);

    /**
     * A query or an Update can fail for a moment around a worker restart (the session's
     * sticky worker is gone); that is not lost data. Retried until it answers or the
     * deadline, so only what stays unreadable is reported.
     */
    const patiently = async <T>(work: () => Promise<T>, what: string): Promise<T> => {
      for (;;) {
        try {
          return await timeLeft(work(), what);
        } catch (error) {
          if (Date.now() + 1_000 >= deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }
    };

    const runSession = async (n: number): Promise<void> => {
      const currentRig = rig as SoakRig;
      const currentTarget = target as HttpTarget;
      const provider = PROVIDERS[n % PROVIDERS.length] as string;
      // `echo…`: an attempt nobody scripted (a retry after a restart) is answered, not refused.
      const model = `echo-soak-${run}-${n}`;
      models.push(model);
      const workflowId = `soak-${run}-${n}`;
      // Per session, so session n meets the same turns for the same seed whatever the timing.
      const random = seededRandom((o.seed ^ Math.imul(n, 0x9e3779b1)) >>> 0);
      const plan = planSession(n, random, o.maxTurns);
      const record: SessionEvidence = { workflowId, sends: [] };
      evidence.push(record);
      let handle: SessionHandle;
      try {
        handle = await startSession(currentRig.client, { AGENT_TASK_QUEUE: currentRig.taskQueue }, {
          model: `${provider}:${model}`,
          workflowId,
          retryPolicy: SOAK_RETRY_POLICY,
          toolTimeouts: { http_request: TOOL_TIMEOUT_MS },
          idleTimeoutMs: o.durationMs + o.graceMs + 60_000,
        });
      } catch (error) {
        record.sends.push({ error: `the session did not start: ${(error as Error).message}` });
        return;
      }
      for (const [i, scenario] of plan.entries()) {
        currentRig.llm.clear(model);
        currentRig.llm.script(model, ...scenario.replies(currentTarget.url, `${n}-${i + 1}`));
        const stats = (scenarioStats[scenario.name] ??= { turns: 0, unexpected: 0 });
        stats.turns++;
        try {
          const outcome = await timeLeft(sendAndWait(handle, `turn ${i + 1}: ${scenario.name}`), `${workflowId} turn ${i + 1}`);
          record.sends.push({ outcome: { status: outcome.status, turn: outcome.turn ?? i + 1 } });
          bump(turnsByStatus, outcome.status);
          if (outcome.failure) bump(turnFailures, outcome.failure.type);
          if (outcome.status !== scenario.expected) stats.unexpected++;
        } catch (error) {
          record.sends.push({ error: (error as Error).message });
          if (Date.now() >= deadline) stuck++;
          return;
        }
      }
      try {
        // Retried only while the session still runs: `end` is refused once it has ended.
        await patiently(async () => {
          if ((await handle.describe()).status.name === 'RUNNING') await endSession(handle);
        }, `${workflowId} end`);
        record.turnsInResult = (await timeLeft(handle.result(), `${workflowId} result`)).turns;
      } catch (error) {
        record.resultError = (error as Error).message;
      }
      try {
        record.events = (await patiently(() => readLog(handle), `${workflowId} log`)) as SessionEvent[];
      } catch (error) {
        record.readError = (error as Error).message;
      }
    };

    let restarts = 0;
    let stopRestarts = false;
    const restarter = (async () => {
      while (!stopRestarts && restarts < o.maxRestarts) {
        await new Promise((resolve) => setTimeout(resolve, o.restartEveryMs));
        // Also while the last sessions drain: a restart then is as good a test as any.
        if (stopRestarts) break;
        const begun = Date.now();
        await (rig as SoakRig).restartWorker();
        restarts++;
        log(`soak: restarted the worker (${restarts}/${o.maxRestarts}) in ${((Date.now() - begun) / 1000).toFixed(1)} s`);
      }
    })();

    // Session n's first turn is scenario n of the mix, so the first SCENARIOS.length sessions
    // start even after the window: on a busy machine fewer fit in it, and the mix must be met.
    const lanes = Array.from({ length: o.concurrency }, async () => {
      while (launched < o.sessions && (Date.now() < startBy || launched < SCENARIOS.length)) {
        const n = ++launched;
        await runSession(n);
        if (n % 10 === 0) log(`soak: ${n} sessions started, ${Math.round((Date.now() - started) / 1000)} s`);
      }
    });
    await Promise.all(lanes);
    stopRestarts = true;
    await restarter;

    const llmAttempts: Record<string, number> = {};
    for (const model of models) for (const request of rig.llm.requests({ model })) bump(llmAttempts, request.replyKind);
    const toolResults: Record<string, number> = {};
    for (const e of evidence.flatMap((s) => s.events ?? [])) if (e.type === 'tool/result') bump(toolResults, e.code);
    const targetSeen = target.requests();
    const sideEffecting = targetSeen.filter((r) => r.method === 'POST');
    const lostData = [
      ...evidence.flatMap(sessionViolations),
      ...duplicateSideEffects(sideEffecting.map((r) => (typeof r.headers['idempotency-key'] === 'string' ? r.headers['idempotency-key'] : undefined))),
      ...sideEffecting.filter((r) => r.headers['idempotency-key'] === undefined).map((r) => `POST ${r.path} reached the target without an Idempotency-Key`),
    ];

    return {
      seed: o.seed,
      workers: o.workers,
      durationMs: Date.now() - started,
      sessions: evidence.length,
      turns: evidence.reduce((sum, s) => sum + s.sends.length, 0),
      turnsByStatus,
      turnFailures,
      scenarios: scenarioStats,
      llmAttempts,
      toolResults,
      targetRequests: { total: targetSeen.length, sideEffecting: sideEffecting.length },
      workerRestarts: restarts,
      stuck,
      lostData,
    };
  } finally {
    await rig?.close().catch(() => undefined);
    await target?.close().catch(() => undefined);
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

export function formatReport(r: SoakReport): string {
  const table = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort(([, a], [, b]) => b - a)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || 'none';
  const scenarios = Object.entries(r.scenarios)
    .map(([name, s]) => `  ${name.padEnd(28)} ${String(s.turns).padStart(4)} turns${s.unexpected ? `, ${s.unexpected} ended otherwise (restarts)` : ''}`)
    .join('\n');
  return [
    `soak report (seed ${r.seed}, ${r.workers} workers, ${(r.durationMs / 1000).toFixed(0)} s)`,
    `sessions        ${r.sessions}`,
    `turns           ${r.turns} (${table(r.turnsByStatus)})`,
    `turn failures   ${table(r.turnFailures)}`,
    `LLM attempts    ${Object.values(r.llmAttempts).reduce((a, b) => a + b, 0)} (${table(r.llmAttempts)})`,
    `tool results    ${table(r.toolResults)}`,
    `target requests ${r.targetRequests.total} (${r.targetRequests.sideEffecting} side-effecting)`,
    `worker restarts ${r.workerRestarts}`,
    `stuck sessions  ${r.stuck}`,
    `lost data       ${r.lostData.length}`,
    ...r.lostData.slice(0, 50).map((line) => `  ! ${line}`),
    'scenarios',
    scenarios,
  ].join('\n');
}

/** The CI profile: what test/soak.test.ts runs, inside a minute on two cores. */
export const CI_PROFILE = {
  sessions: 20,
  durationMs: 15_000,
  // Generous: a worker restart waits out the worker's 10 s shutdown grace, and CI's two
  // cores may be busy with other suites. A session still open after this is stuck for real.
  graceMs: 60_000,
  concurrency: 6,
  maxTurns: 2,
  workers: 'in-process',
  restartEveryMs: 5_000,
  maxRestarts: 2,
  // Fixed, so a CI failure can be run again as it was; every scenario still runs, since
  // each session's first turn walks the catalogue.
  seed: 20_261_130,
} as const satisfies Partial<SoakOptions>;

/** `npm run soak`: five minutes, worker processes killed with SIGKILL. */
export const DEFAULT_PROFILE = {
  sessions: 400,
  durationMs: 300_000,
  graceMs: 180_000,
  concurrency: 8,
  maxTurns: 3,
  workers: 'process',
  restartEveryMs: 45_000,
  maxRestarts: 6,
} as const satisfies Partial<SoakOptions>;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      profile: { type: 'string', default: 'default' },
      sessions: { type: 'string' },
      duration: { type: 'string' },
      concurrency: { type: 'string' },
      workers: { type: 'string' },
      restarts: { type: 'string' },
      seed: { type: 'string' },
    },
  });
  const profile = values.profile === 'ci' ? CI_PROFILE : DEFAULT_PROFILE;
  const number = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  const options: SoakOptions = {
    ...profile,
    ...(process.env.TEMPORAL_ADDRESS ? { address: process.env.TEMPORAL_ADDRESS } : {}),
    ...(values.sessions ? { sessions: number(values.sessions) } : {}),
    ...(values.duration ? { durationMs: (number(values.duration) ?? 0) * 1000 } : {}),
    ...(values.concurrency ? { concurrency: number(values.concurrency) } : {}),
    ...(values.workers ? { workers: values.workers as WorkerMode } : {}),
    ...(values.restarts ? { maxRestarts: number(values.restarts) } : {}),
    ...(values.seed ? { seed: number(values.seed) } : {}),
  };
  const parsed = SoakOptionsSchema.safeParse(options);
  if (!parsed.success) {
    console.error(`soak: ${z.prettifyError(parsed.error)}`);
    return 2;
  }
  const report = await runSoak(options, (line) => console.error(line));
  console.log(formatReport(report));
  if (report.lostData.length > 0 || report.stuck > 0) {
    console.error(`soak: FAILED: ${report.lostData.length} lost-data findings, ${report.stuck} stuck sessions (seed ${report.seed})`);
    return 1;
  }
  return 0;
}

const invokedDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
