/**
 * `npm run bench -- --only actions`: what a session costs in billable actions, the unit
 * Temporal Cloud bills by. On a private dev server started with `--metrics-port` (its
 * `action` counter, read through bench/stream-actions.ts's meter), a real worker process and
 * the scripted LLM answering at once:
 * - one session of one turn of `steps` steps, three calculator calls in each but the last,
 *   started with its message (update-with-start, as `agent run` does): the metered actions by
 *   type, the same counted from its history by Cloud's rules (actions-result.ts), and the
 *   minimum (a start, an activity per LLM and per tool call, an Update for the message); then
 *   the same turn again in that session, metered apart: what each later turn costs;
 * - an idle session watched for `idleSeconds`, scaled to an hour;
 * - a turn whose one LLM call streams for `streamSeconds`: its heartbeats per minute of streaming,
 *   and the Queries `watch` makes following it;
 * - one `state` Query, one page of `log`, one `list` of the task queue's sessions.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { endSession, readLog, sendAndWait, startSessionWithMessage, type TurnResult } from '../client';
import { listSessions } from '../client/list-sessions';
import { watchSession } from '../client/watch';
import { stateQuery } from '../contracts/api';
import type { DevServer } from '../harness/dev-server';
import { agentWorkerEnv } from '../harness/worker-env';
import { spawnWorker, type WorkerProcess } from '../harness/worker-process';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { historyActions, sumCounts, type ActionsResult, type ActionsSettings, type SessionActions } from './actions-result';
import { BENCH_WORKSPACE, RESULTS_DIR } from './bench-env';
import { scriptTurn, uniqueModel } from './scripted-turn';
import { actionsBetween, openActionMeter, startMeteredDevServer, totalActions, type ActionMeter } from './stream-actions';

const NAMESPACE = 'default';
/** Tool calls the scripted turn asks for in each step but the last (bench/scripted-turn.ts). */
const CALLS_PER_STEP = 3;

interface Rig {
  llm: ScriptedLlm;
  client: Client;
  meter: ActionMeter;
  taskQueue: string;
}

export async function measureActions(settings: ActionsSettings, progress: (line: string) => void): Promise<ActionsResult> {
  const started = performance.now();
  const llm = await startScriptedLlm({ demo: false });
  let server: DevServer | undefined;
  let connection: Connection | undefined;
  let worker: WorkerProcess | undefined;
  try {
    const metered = await startMeteredDevServer();
    server = metered.server;
    const taskQueue = `bench-actions-${randomUUID()}`;
    worker = await spawnWorker({ env: agentWorkerEnv({ address: server.address, namespace: NAMESPACE, taskQueue, llmUrl: llm.url, workspace: BENCH_WORKSPACE }), logFile: path.join(RESULTS_DIR, 'worker.log') });
    await worker.ready;
    connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection, namespace: NAMESPACE });
    const rig: Rig = { llm, client, meter: await openActionMeter(client, metered.metricsUrl, NAMESPACE), taskQueue };

    // A first session, not measured: the worker has bundled, connected and warmed up.
    await measureSession(rig, 1);
    const runs: SessionActions[] = [];
    for (let i = 1; i <= settings.runs; i++) {
      progress(`actions: session ${i}/${settings.runs}, one turn of ${settings.steps} steps`);
      runs.push(await measureSession(rig, settings.steps));
    }
    const byTotal = [...runs].sort((a, b) => a.meteredTotal - b.meteredTotal);
    const session = byTotal[Math.floor((byTotal.length - 1) / 2)] as SessionActions;
    progress(`actions: an idle session for ${settings.idleSeconds} s`);
    const idle = await measureIdle(rig, settings.idleSeconds);
    progress(`actions: one LLM call streaming for ${settings.streamSeconds} s`);
    const streaming = await measureStreaming(rig, settings.streamSeconds);
    progress('actions: the client\'s state, log and list');
    const clientCosts = await measureClient(rig);
    return { settings, session, meteredTotals: runs.map((r) => r.meteredTotal), idle, streaming, client: clientCosts, durationS: Math.round((performance.now() - started) / 1000) };
  } finally {
    await worker?.kill();
    await connection?.close();
    await server?.stop();
    await llm.close();
  }
}

/** One session, one turn of `steps` steps, metered from before its start to after its turn; a second such turn and its end apart. */
async function measureSession(rig: Rig, steps: number): Promise<SessionActions> {
  const model = uniqueModel('actions');
  scriptTurn(rig.llm, model, steps);
  const before = await rig.meter.read();
  const started = await startSessionWithMessage(rig.client, { AGENT_TASK_QUEUE: rig.taskQueue }, { model: `anthropic:${model}` }, 'Three sums a step, please.');
  completed(await started.turn());
  const afterTurn = await rig.meter.read();
  // The same turn again in the same session, while the idle timer the first left runs.
  scriptTurn(rig.llm, model, steps);
  completed(await sendAndWait(started.handle, 'And three more, please.'));
  const afterLater = await rig.meter.read();
  await endSession(started.handle);
  await started.handle.result();
  const afterEnd = await rig.meter.read();
  const metered = actionsBetween(before, afterTurn);
  // The history up to the first turn's end: the later turn and `end` are counted apart, as the metered figures are.
  const events = (await started.handle.fetchHistory()).events ?? [];
  const updates = events.flatMap((e, i) => (e.workflowExecutionUpdateAcceptedEventAttributes ? [i] : []));
  const fromHistory = historyActions(events.slice(0, updates[1] ?? events.length));
  const toolCalls = (steps - 1) * CALLS_PER_STEP;
  const later = actionsBetween(afterTurn, afterLater);
  return {
    laterTurn: { metered: later, meteredTotal: totalActions(later), minimum: steps + toolCalls + 1 },
    metered,
    meteredTotal: totalActions(metered),
    fromHistory,
    historyTotal: sumCounts(fromHistory),
    llmCalls: steps,
    toolCalls,
    minimum: 1 + steps + toolCalls + 1,
    endMetered: actionsBetween(afterLater, afterEnd),
  };
}

function completed(turn: TurnResult): void {
  if (turn.status !== 'completed') throw new Error(`bench: a measured turn ended ${turn.status}: ${turn.failure?.message ?? ''}`);
}

/** A session that answered once, then left idle (no message, no end) for `seconds`. */
async function measureIdle(rig: Rig, seconds: number): Promise<ActionsResult['idle']> {
  const model = uniqueModel('actions-idle');
  scriptTurn(rig.llm, model, 1);
  const started = await startSessionWithMessage(rig.client, { AGENT_TASK_QUEUE: rig.taskQueue }, { model: `anthropic:${model}` }, 'Hello.');
  await started.turn();
  const before = await rig.meter.read();
  await sleep(seconds * 1000);
  const metered = actionsBetween(before, await rig.meter.read());
  await endSession(started.handle);
  return { seconds, metered, perHour: Math.round((totalActions(metered) / seconds) * 3600) };
}

/** Pieces of the streamed answer a second: about a token each, as a provider streams. */
const PIECES_PER_SECOND = 20;
/** The heartbeats' action type: an LLM activity heartbeats while its stream runs (activities/llm/activity.ts). */
const HEARTBEAT_TYPE = 'grpc_RecordActivityTaskHeartbeat';
/** A Query's action type: `state`, `log` and `watch` read a session by Queries. */
const QUERY_TYPE = 'grpc_QueryWorkflow';

/** A one-step turn whose answer streams for `seconds`: what its heartbeats cost per minute of streaming. */
async function measureStreaming(rig: Rig, seconds: number): Promise<ActionsResult['streaming']> {
  const model = uniqueModel('actions-stream');
  const pieces = seconds * PIECES_PER_SECOND;
  rig.llm.script(model, { kind: 'text', text: 'word '.repeat(pieces), chunkSize: 5, chunkDelayMs: 1000 / PIECES_PER_SECOND });
  const before = await rig.meter.read();
  const started = await startSessionWithMessage(rig.client, { AGENT_TASK_QUEUE: rig.taskQueue }, { model: `anthropic:${model}` }, 'Take your time.');
  // `watch` follows the turn throughout, at its default pace: the turn itself makes no Query, so every one metered is the watch's.
  const turn = started.turn();
  const watching = performance.now();
  await watchSession(rig.client, started.handle, { until: turn, onItem: () => undefined });
  const watchSeconds = Math.round((performance.now() - watching) / 1000);
  await turn;
  const metered = actionsBetween(before, await rig.meter.read());
  await endSession(started.handle);
  const { [QUERY_TYPE]: watchQueries = 0, ...turnActions } = metered;
  return { seconds, metered: turnActions, heartbeatsPerMinute: Math.round(((metered[HEARTBEAT_TYPE] ?? 0) / seconds) * 60), watch: { seconds: watchSeconds, queries: watchQueries } };
}

/** One of each read a person makes of a session: its state, a page of its log, the list. */
async function measureClient(rig: Rig): Promise<ActionsResult['client']> {
  const model = uniqueModel('actions-client');
  scriptTurn(rig.llm, model, 1);
  const started = await startSessionWithMessage(rig.client, { AGENT_TASK_QUEUE: rig.taskQueue }, { model: `anthropic:${model}` }, 'Hello.');
  await started.turn();
  const handle = started.handle;
  const metered = async (read: () => Promise<unknown>) => {
    const before = await rig.meter.read();
    await read();
    return actionsBetween(before, await rig.meter.read());
  };
  const state = await metered(() => started.handle.query(stateQuery));
  const log = await metered(() => readLog(handle));
  const list = await metered(() => listSessions(rig.client, { taskQueue: rig.taskQueue }));
  await endSession(handle);
  return { state, log, list };
}
