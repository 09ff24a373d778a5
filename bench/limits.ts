/**
 * `npm run bench -- --only limits`: what the fleet limits (docs/fleet-limits.md) do for a
 * fleet of sessions, and what they cost when they do not bind. Two real worker processes of
 * one task queue, given one AGENT_LIMITS_FILE, against the scripted LLM answering 429
 * above a tokens-per-window limit (its own count, as a provider's):
 * - the load, twice: `sessions` sessions of `turns` turns at once against the limit, first
 *   with a model the limits file does not name (the ladder alone: each call backs off on
 *   its own), then with one it names at the provider's figure (the shared limit). Turns
 *   completed and failed, the 429s the provider sent, turn time, the window's peak.
 * - the not-limited cost: a small load on a model the file does not name, and on one it
 *   names with a limit far above the load, in alternating blocks: the LLM activity's time
 *   from its start to its request's arrival (the lease is asked in between), and the
 *   limiter's actions per call, read from its history.
 * One pair of workers serves every run: a model the file does not name asks no limiter,
 * exactly as a worker without the file (activities/llm/fleet-lease.ts), so the runs differ
 * by the limit alone and the workers start once.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { endSession, sendAndWait, startSession, type SessionHandle } from '../client';
import { limiterWorkflowId, type FleetLimit } from '../contracts/fleet-limits';
import type { ProviderId } from '../contracts/model-ref';
import { DEFAULT_RETRY_POLICY, RETRY_LIMITS, type RetryPolicy } from '../contracts/retry-policy';
import { DEFAULT_DYNAMIC_CONFIG, findFreePort, startDevServer, type DevServer } from '../harness/dev-server';
import { agentWorkerEnv } from '../harness/worker-env';
import { spawnWorker, type WorkerProcess } from '../harness/worker-process';
import { startScriptedLlm, type RecordedRequest, type ScriptedLlm } from '../testing/scripted-llm/server';
import { windowPeak } from '../testing/scripted-llm/window-peak';
import { BENCH_WORKSPACE, RESULTS_DIR } from './bench-env';
import type { CostRun, LimitedRun, LimiterActions, LimitsResult, LimitsSettings, NotLimitedCost } from './limits-result';
import { median, percentile, round } from './stats';

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
type HistoryEvent = NonNullable<History['events']>[number];

/** A limit no load of this benchmark comes near: the limiter grants every call at once. */
const NEVER_BINDING = 1_000_000_000;

/** Where the benchmark runs: a server of the caller's (a test's), or one of its own. */
export interface LimitsTarget {
  address: string;
  namespace: string;
}

export interface LimitsOptions {
  progress: (line: string) => void;
  /** Default: a private dev server, stopped at the end. */
  target?: LimitsTarget;
  /** The worker processes' output. Default bench/results/worker.log. */
  workerLog?: string;
  /**
   * The worker processes' main (spawnWorker's `entry`). Default `npm run worker`'s, which
   * bundles the workflows in each process; a test gives one that takes the suite's cached
   * bundle (test/support/agents-worker.ts), saving those seconds of each start.
   */
  workerEntry?: string;
  /** Dynamic config of the private dev server, over the project's own (`--server-config`), e.g. to try a server limit. */
  dynamicConfig?: Readonly<Record<string, unknown>>;
}

/**
 * The default ladder scaled by the window as a minute scales to it (5 s: a twelfth), so a
 * call spends the same share of the provider's window on its waits and its budget as it
 * would at 60 s; kept within the policy's bounds. The server-wait ceiling is one window,
 * as the provider's longest `retry-after` is.
 */
export function ladderOf(windowSeconds: number): RetryPolicy {
  const f = windowSeconds / 60;
  const at = (value: number, name: keyof typeof RETRY_LIMITS) => Math.max(RETRY_LIMITS[name].min, Math.round(value * f));
  const baseDelayMs = at(DEFAULT_RETRY_POLICY.baseDelayMs, 'baseDelayMs');
  return {
    maxRetries: DEFAULT_RETRY_POLICY.maxRetries,
    baseDelayMs,
    maxDelayMs: Math.max(baseDelayMs, at(DEFAULT_RETRY_POLICY.maxDelayMs, 'maxDelayMs')),
    budgetMs: at(DEFAULT_RETRY_POLICY.budgetMs, 'budgetMs'),
    maxServerWaitMs: windowSeconds * 1000,
  };
}

interface Rig {
  llm: ScriptedLlm;
  client: Client;
  taskQueue: string;
  run: string;
  settings: LimitsSettings;
}

/** The models of each run: the limits file names `shared` and `notBinding`, and no other. */
function modelsOf(run: string) {
  return {
    ladder: `echo-limits-ladder-${run}`,
    shared: `echo-limits-shared-${run}`,
    noLimits: `echo-limits-cost-none-${run}`,
    notBinding: `echo-limits-cost-loose-${run}`,
  };
}
/** The load runs on anthropic (its 429 says how long to wait), the cost runs on openai: each limiter's history is one run's alone. */
const LOAD_PROVIDER: ProviderId = 'anthropic';
const COST_PROVIDER: ProviderId = 'openai';

export function limitsFileOf(settings: LimitsSettings, run: string): FleetLimit[] {
  const models = modelsOf(run);
  // Not learning: the scripted provider's headers state its short window's figures, which
  // the limiter would read as a real provider's per-minute ones and hold the calls to them
  // (docs/fleet-limits.md: learning is tested on the real headers' formats).
  const common = { windowSeconds: settings.windowSeconds, learn: false, outputReserve: 4_096 };
  return [
    { provider: LOAD_PROVIDER, model: models.shared, inputTokensPerMinute: (settings.tokensPerWindow * 60) / settings.windowSeconds, ...common },
    { provider: COST_PROVIDER, model: models.notBinding, requestsPerMinute: NEVER_BINDING, inputTokensPerMinute: NEVER_BINDING, ...common },
  ];
}

export async function measureLimits(settings: LimitsSettings, options: LimitsOptions): Promise<LimitsResult> {
  const started = performance.now();
  const { progress } = options;
  const run = randomUUID().slice(0, 8);
  const models = modelsOf(run);
  const llm = await startScriptedLlm({ demo: false });
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-limits-'));
  let server: DevServer | undefined;
  let connection: Connection | undefined;
  const workers: WorkerProcess[] = [];
  const taskQueue = `bench-limits-${run}`;
  try {
    for (const model of [models.ladder, models.shared]) llm.setRateLimit(model, { inputTokens: settings.tokensPerWindow, windowMs: settings.windowSeconds * 1000 });
    const file = path.join(dir, 'limits.json');
    await writeFile(file, JSON.stringify({ limits: limitsFileOf(settings, run) }));
    let target = options.target;
    if (!target) {
      progress('limits: starting a dev server');
      server = await startDevServer({
        ip: '127.0.0.1',
        port: await findFreePort(),
        uiPort: false,
        dynamicConfig: { ...DEFAULT_DYNAMIC_CONFIG, ...options.dynamicConfig },
        output: { file: path.join(RESULTS_DIR, 'temporal-dev-server.log') },
      });
      target = { address: server.address, namespace: server.namespace };
    }
    progress('limits: starting two worker processes of one task queue, with the limits file');
    const env = agentWorkerEnv({ address: target.address, namespace: target.namespace, taskQueue, llmUrl: llm.url, workspace: BENCH_WORKSPACE, extra: { AGENT_LIMITS_FILE: file } });
    const logFile = options.workerLog ?? path.join(RESULTS_DIR, 'worker.log');
    const entry = options.workerEntry === undefined ? {} : { entry: options.workerEntry };
    const spawned = await Promise.all([spawnWorker({ env, logFile, ...entry }), spawnWorker({ env, logFile, ...entry })]);
    workers.push(...spawned);
    await Promise.all(spawned.map((w) => w.ready));
    connection = await Connection.connect({ address: target.address });
    const rig: Rig = { llm, client: new Client({ connection, namespace: target.namespace }), taskQueue, run, settings };

    progress(`limits: the not-limited cost, ${settings.costSessions} session(s) a run, ${settings.costRounds} rounds`);
    const notLimited = await measureCost(rig);
    const ladder = ladderOf(settings.windowSeconds);
    progress(`limits: ${settings.sessions} sessions × ${settings.turns} turns, the ladder alone`);
    const alone = await measureLoad(rig, 'ladder', ladder);
    progress(`limits: ${settings.sessions} sessions × ${settings.turns} turns, the shared limit`);
    const shared = await measureLoad(rig, 'shared', ladder);
    return { settings, runs: [alone, shared], notLimited, ladder, durationS: Math.round((performance.now() - started) / 1000) };
  } finally {
    // The limiters never end by themselves: on a server that outlives the run (a test's), they would wait there for nothing.
    if (connection) {
      const client = new Client({ connection, namespace: options.target?.namespace ?? server?.namespace ?? 'default' });
      await Promise.all([LOAD_PROVIDER, COST_PROVIDER].map((p) => client.workflow.getHandle(limiterWorkflowId(taskQueue, p)).terminate('the benchmark ended').catch(() => undefined)));
    }
    await Promise.all(workers.map((w) => w.kill()));
    await connection?.close();
    await server?.stop();
    await llm.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A session of the run, tagged so its requests are told from the others' (`requestsOf`). */
async function sessionOf(rig: Rig, name: string, model: string, provider: ProviderId, retryPolicy?: RetryPolicy): Promise<{ handle: SessionHandle; tag: string }> {
  const workflowId = `bench-limits-${name}-${rig.run}`;
  const handle = await startSession(rig.client, { AGENT_TASK_QUEUE: rig.taskQueue }, { workflowId, model: `${provider}:${model}`, ...(retryPolicy ? { retryPolicy } : {}) });
  return { handle, tag: `[${workflowId}]` };
}

/** Every message of a session carries its tag, so a request that holds it is that session's. */
function requestsOf(llm: ScriptedLlm, model: string, tag: string): RecordedRequest[] {
  return llm.requests({ model }).filter((r) => r.rawBody?.includes(tag));
}

async function measureLoad(rig: Rig, kind: LimitedRun['run'], ladder: RetryPolicy): Promise<LimitedRun> {
  const { llm, settings } = rig;
  const model = kind === 'ladder' ? modelsOf(rig.run).ladder : modelsOf(rig.run).shared;
  const sessions = await Promise.all(Array.from({ length: settings.sessions }, (_, i) => sessionOf(rig, `${kind}-${i + 1}`, model, LOAD_PROVIDER, ladder)));
  const turnMs: number[] = [];
  const failures: Record<string, number> = {};
  const failureMessages: Record<string, number> = {};
  const started = performance.now();
  await Promise.all(
    sessions.map(async ({ handle, tag }) => {
      for (let turn = 1; turn <= settings.turns; turn++) {
        const sent = performance.now();
        const result = await sendAndWait(handle, `${tag} turn ${turn}`);
        if (result.status === 'completed') turnMs.push(performance.now() - sent);
        else {
          const type = result.failure?.type ?? result.status;
          failures[type] = (failures[type] ?? 0) + 1;
          const message = messageOf(result.failure?.message ?? result.status);
          failureMessages[message] = (failureMessages[message] ?? 0) + 1;
        }
      }
    }),
  );
  const durationMs = Math.round(performance.now() - started);
  await Promise.all(sessions.map(({ handle }) => endSession(handle)));
  const requests = llm.requests({ model });
  const served = requests.filter((r) => r.replyKind !== 'rate_limited');
  const windowMs = settings.windowSeconds * 1000;
  const failed = Object.values(failures).reduce((a, b) => a + b, 0);
  return {
    run: kind,
    turnsCompleted: turnMs.length,
    turnsFailed: failed,
    failures,
    failureMessages,
    requests: requests.length,
    rateLimited: requests.length - served.length,
    turnP50Ms: orNull(turnMs, 50),
    turnP95Ms: orNull(turnMs, 95),
    peakTokens: windowPeak(served, windowMs).tokens,
    peakAskedTokens: windowPeak(requests, windowMs).tokens,
    allowanceTokens: settings.tokensPerWindow,
    meanRequestTokens: requests.length === 0 ? 0 : round(requests.reduce((sum, r) => sum + r.tokens, 0) / requests.length, 1),
    durationMs,
    ...(kind === 'shared' ? { limiter: await limiterActions(rig, LOAD_PROVIDER, served.length) } : {}),
  };
}

/**
 * The same small load on a model without a limit and on one under a limit it never comes
 * near, in blocks of one turn of each run's sessions, the runs' order alternating by round
 * so neither always goes first on a warmer worker.
 */
async function measureCost(rig: Rig): Promise<NotLimitedCost> {
  const { settings, llm } = rig;
  const models = modelsOf(rig.run);
  const runs = [
    { run: 'no-limits' as const, model: models.noLimits },
    { run: 'not-binding' as const, model: models.notBinding },
  ];
  const sessions = await Promise.all(runs.map(({ run, model }) => Promise.all(Array.from({ length: settings.costSessions }, (_, i) => sessionOf(rig, `${run}-${i + 1}`, model, COST_PROVIDER)))));
  for (let round = 1; round <= settings.costRounds; round++) {
    const order = round % 2 === 1 ? [0, 1] : [1, 0];
    for (const r of order) {
      await Promise.all(
        (sessions[r] ?? []).map(async ({ handle, tag }) => {
          const result = await sendAndWait(handle, `${tag} round ${round}`);
          if (result.status !== 'completed') throw new Error(`bench limits: a turn of ${handle.workflowId} ended ${result.status}${result.failure ? `: ${result.failure.type}` : ''}`);
        }),
      );
    }
  }
  const measured = await Promise.all(
    runs.map(async ({ run, model }, r): Promise<CostRun> => {
      const toRequest: number[] = [];
      const activity: number[] = [];
      for (const { handle, tag } of sessions[r] ?? []) {
        const calls = llmActivities(await handle.fetchHistory());
        const requests = requestsOf(llm, model, tag);
        // No call of these runs is retried: the i-th activity sent the i-th request. Round 1 warms up.
        calls.forEach((call, i) => {
          if (i === 0) return;
          const request = requests[i];
          if (request) toRequest.push(request.at - call.started);
          activity.push(call.completed - call.started);
        });
      }
      return { run, calls: activity.length, startToRequestP50Ms: orNull(toRequest, 50), startToRequestP95Ms: orNull(toRequest, 95), activityP50Ms: orNull(activity, 50) };
    }),
  );
  await Promise.all(sessions.flat().map(({ handle }) => endSession(handle)));
  const [none, loose] = measured as [CostRun, CostRun];
  const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : round(b - a, 1));
  return {
    runs: [none, loose],
    addedStartToRequestMs: diff(none.startToRequestP50Ms, loose.startToRequestP50Ms),
    addedActivityMs: diff(none.activityP50Ms, loose.activityP50Ms),
    limiter: await limiterActions(rig, COST_PROVIDER, llm.requests({ model: models.notBinding }).length),
  };
}

const eventMs = (e: HistoryEvent | undefined): number => (e ? Number(e.eventTime?.seconds ?? 0) * 1000 + Number(e.eventTime?.nanos ?? 0) / 1e6 : Number.NaN);

/** Each LLM activity of a session's history, started and completed, in order. */
function llmActivities(history: History): { started: number; completed: number }[] {
  const events = history.events ?? [];
  return events
    .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callLlm')
    .map((scheduled) => {
      const id = Number(scheduled.eventId);
      const started = events.find((e) => Number(e.activityTaskStartedEventAttributes?.scheduledEventId) === id);
      const completed = events.find((e) => Number(e.activityTaskCompletedEventAttributes?.scheduledEventId) === id);
      return { started: eventMs(started), completed: eventMs(completed) };
    })
    .filter((a) => Number.isFinite(a.started) && Number.isFinite(a.completed));
}

/**
 * What the provider's limiter spent, from its history, every run of it (a run that
 * continued as new names the one before). Temporal Cloud bills an Update, a signal, a
 * timer and a workflow start (a continue-as-new included) as one action each.
 */
export async function limiterActions(rig: Pick<Rig, 'client' | 'taskQueue'>, provider: ProviderId, calls: number): Promise<LimiterActions> {
  const counts = { runs: 0, updates: 0, signals: 0, timers: 0, starts: 0 };
  const workflowId = limiterWorkflowId(rig.taskQueue, provider);
  for (let runId: string | undefined; ; ) {
    const history = await rig.client.workflow.getHandle(workflowId, runId).fetchHistory();
    let previous: string | undefined;
    counts.runs++;
    for (const e of history.events ?? []) {
      if (e.workflowExecutionUpdateAcceptedEventAttributes) counts.updates++;
      else if (e.workflowExecutionSignaledEventAttributes) counts.signals++;
      else if (e.timerStartedEventAttributes) counts.timers++;
      else if (e.workflowExecutionStartedEventAttributes) {
        counts.starts++;
        previous = e.workflowExecutionStartedEventAttributes.continuedExecutionRunId || undefined;
      }
    }
    if (previous === undefined) break;
    runId = previous;
  }
  const total = counts.updates + counts.signals + counts.timers + counts.starts;
  return { ...counts, total, calls, perCall: calls === 0 ? null : round(total / calls, 2) };
}

/** A failure's first line, its session's own names taken out, so the same failure of every session counts as one. */
function messageOf(message: string): string {
  const line = message.split('\n')[0] ?? '';
  return line.replace(/bench-limits-[\w-]+/g, '…').slice(0, MESSAGE_CHARS);
}
const MESSAGE_CHARS = 300;

function orNull(samples: readonly number[], p: number): number | null {
  if (samples.length === 0) return null;
  return round(p === 50 ? median(samples) : percentile(samples, p), 1);
}
