/**
 * `npm run bench -- --only stream`: what it costs to follow a session live, and how fast
 * its text arrives. On a private dev server started with `--metrics-port` (its `action`
 * counter is what Temporal Cloud bills), a real worker process publishing on the live
 * stream, an in-process gateway and the scripted LLM streaming an answer piece by piece:
 * - token latency: from the scripted LLM writing a piece to a real headless Chromium page
 *   holding it, read from the gateway's event stream (bench/stream-browser.ts);
 * - billable actions per turn with 1, 10 and 100 viewers of the event stream, and with as
 *   many `watch`es (client/watch.ts, today's live view, polling), and a longer answer with
 *   one of each: the gateway's cost should not grow with viewers nor tokens, watch's does;
 * - heartbeats per turn (what `watch` reads the text from) and the history each turn leaves;
 * - each transport alone, publisher to subscriber (bench/stream-hop.ts).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { parseLiveStreamEnv } from '../config/live-stream';
import { endSession, sendAndWait, startSession, type SessionHandle } from '../client';
import type { LiveStreamSubscriber } from '../contracts/live-stream';
import type { DevServer } from '../harness/dev-server';
import { startNatsServer, type NatsServer } from '../harness/nats-server';
import { startLocalGateway, type LocalGateway } from '../harness/gateway';
import { agentWorkerEnv } from '../harness/worker-env';
import { spawnWorker, type WorkerProcess } from '../harness/worker-process';
import { createLiveStreamSubscriber } from '../streaming';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { BENCH_WORKSPACE, RESULTS_DIR } from './bench-env';
import { round } from './stats';
import { actionsBetween, openActionMeter, startMeteredDevServer, totalActions, type ActionCounts, type ActionMeter } from './stream-actions';
import { openBrowserViewer, type BrowserViewer } from './stream-browser';
import { measureHop } from './stream-hop';
import { pieceLatencies, summarize, type PieceSent, type TextReceipt } from './stream-latency';
import type { StreamResult, StreamRun, StreamSettings, StreamTransport } from './stream-result';
import { startStreamViewers } from './stream-viewers';
import { startWatchers } from './stream-watch';

const NAMESPACE = 'default';
/** How long the browser may wait for the answer's log event after the turn completed. */
const ANSWER_TIMEOUT_MS = 60_000;

/** Everything one transport's runs share: the worker publishing on it and the gateway subscribed to it. */
interface Rig {
  transport: StreamTransport;
  taskQueue: string;
  worker: WorkerProcess;
  gateway: LocalGateway;
  browser: BrowserViewer;
}

export async function measureStream(settings: StreamSettings, progress: (line: string) => void): Promise<StreamResult> {
  const started = performance.now();
  const sends = new Map<string, PieceSent[]>();
  const llm = await startScriptedLlm({ demo: false, onContentSent: ({ model, index, at }) => sends.get(model)?.push({ index, at }) });
  let server: DevServer | undefined;
  let broker: NatsServer | undefined;
  let connection: Connection | undefined;
  try {
    const metered = await startMeteredDevServer();
    server = metered.server;
    const { metricsUrl } = metered;
    connection = await Connection.connect({ address: server.address });
    const meter = await openActionMeter(new Client({ connection, namespace: NAMESPACE }), metricsUrl, NAMESPACE);
    const ctx: Ctx = { llm, sends, server, settings, meter };
    const runs: StreamRun[] = [];
    const hops: StreamResult['hops'] = [];
    for (const transport of settings.transports) {
      let env: Record<string, string>;
      if (transport === 'nats') {
        broker = await startNatsServer();
        env = { AGENT_LIVE_STREAM: broker.url };
      } else {
        env = { AGENT_LIVE_STREAM: 'embedded', AGENT_LIVE_STREAM_SOCKET: path.join(tmpdir(), `agent-bench-stream-${process.pid}-${randomUUID().slice(0, 8)}.sock`) };
      }
      progress(`stream: ${transport}: the transport alone, ${settings.hopFrames} frames`);
      hops.push(await measureHop(transport, env, settings.hopFrames));
      const rig = await openRig(ctx, transport, env);
      try {
        const first = transport === settings.transports[0];
        if (first) {
          progress(`stream: the turn alone (${settings.pieces} pieces, no viewer)`);
          runs.push(await measureRun(ctx, rig, 'none', 0, settings.pieces));
        }
        for (const viewers of settings.viewers) {
          progress(`stream: ${transport}: ${viewers} viewer(s) of the gateway's event stream`);
          runs.push(await measureRun(ctx, rig, 'gateway', viewers, settings.pieces));
        }
        progress(`stream: ${transport}: one viewer, ${settings.longPieces} pieces`);
        runs.push(await measureRun(ctx, rig, 'gateway', 1, settings.longPieces));
        if (first) {
          for (const viewers of settings.viewers) {
            progress(`stream: ${viewers} watch(es)`);
            runs.push(await measureRun(ctx, rig, 'watch', viewers, settings.pieces));
          }
          progress(`stream: one watch, ${settings.longPieces} pieces`);
          runs.push(await measureRun(ctx, rig, 'watch', 1, settings.longPieces));
        }
      } finally {
        await closeRig(rig);
        await broker?.close();
        broker = undefined;
      }
    }
    return { settings, runs, hops, durationS: Math.round((performance.now() - started) / 1000) };
  } finally {
    await broker?.close();
    await connection?.close();
    await server?.stop();
    await llm.close();
  }
}

interface Ctx {
  llm: ScriptedLlm;
  sends: Map<string, PieceSent[]>;
  server: DevServer;
  settings: StreamSettings;
  meter: ActionMeter;
}

/** A worker process publishing on the transport, and a gateway subscribed to it, connected to each other. */
async function openRig(ctx: Ctx, transport: StreamTransport, liveEnv: Record<string, string>): Promise<Rig> {
  const taskQueue = `bench-stream-${randomUUID()}`;
  const config = parseLiveStreamEnv(liveEnv, { namespace: NAMESPACE, taskQueue });
  const subscriber: LiveStreamSubscriber = await createLiveStreamSubscriber(config);
  // The worker's publisher says hello once it reaches the gateway's side: the runs wait for it.
  const reached = new Promise<void>((resolve) => subscriber.onResync(resolve));
  const workerEnv = agentWorkerEnv({ address: ctx.server.address, namespace: NAMESPACE, taskQueue, llmUrl: ctx.llm.url, workspace: BENCH_WORKSPACE, extra: liveEnv });
  let worker: WorkerProcess | undefined;
  let gateway: LocalGateway | undefined;
  let browser: BrowserViewer | undefined;
  // The gateway and the browser start while the worker process loads (seconds of each);
  // nothing is measured before all three are up.
  const spawned = spawnWorker({ env: workerEnv, logFile: path.join(RESULTS_DIR, 'worker.log') }).then((w) => (worker = w));
  try {
    gateway = await startLocalGateway({ address: ctx.server.address, namespace: NAMESPACE, taskQueue, subscriber, defaultRequestsPerMinute: 100_000 });
    browser = await openBrowserViewer(gateway.url, gateway.key);
    await (await spawned).ready;
    await withTimeout(reached, 30_000, `the worker's live stream did not reach the gateway (${transport}) within 30 s`);
    return { transport, taskQueue, worker: await spawned, gateway, browser };
  } catch (error) {
    await browser?.close();
    await gateway?.close();
    if (!gateway) await subscriber.close();
    await spawned.catch(() => undefined);
    await worker?.kill();
    throw error;
  }
}

async function closeRig(rig: Rig): Promise<void> {
  await rig.browser.close();
  await rig.gateway.close();
  await rig.worker.kill();
}

let turns = 0;

/**
 * One turn: a fresh session after a first short turn, its viewers joined, one message
 * answered with `pieces` pieces, the viewers gone. The actions counted are everything
 * between a reading before the viewers joined and one after they left, each taken once the
 * session had no workflow task pending.
 */
async function measureRun(ctx: Ctx, rig: Rig, kind: StreamRun['path'], viewers: number, pieces: number): Promise<StreamRun> {
  const { llm, settings } = ctx;
  const model = `bench-stream-${process.pid}-${++turns}`;
  const client = rig.gateway.client;
  const handle: SessionHandle = await startSession(client, { AGENT_TASK_QUEUE: rig.taskQueue }, { model: `openai:${model}` });
  // A first, short turn: the session has a log for its viewers to join (a viewer has joined
  // once it holds the log's first event), and the worker has the session in its caches.
  llm.script(model, { kind: 'text', text: 'ready' });
  const measured = (await turnOf(handle)) + 1;
  const { meter } = ctx;
  const text = answerOf(pieces, settings.chunkSize);
  const sent: PieceSent[] = [];
  ctx.sends.set(model, sent);

  await quiet(handle);
  const before = await meter.read();
  let receipts: TextReceipt[] = [];
  let liveReceipts: TextReceipt[] = [];
  llm.script(model, { kind: 'text', text, chunkSize: settings.chunkSize, chunkDelayMs: settings.pieceDelayMs });
  if (kind === 'gateway') {
    await rig.browser.follow(handle.workflowId);
    const others = startStreamViewers(rig.gateway.url, rig.gateway.key, handle.workflowId, viewers - 1);
    try {
      await others.attached;
      const turn = await turnOf(handle);
      // The page holds every delta once it holds the log's answer of this turn, which comes after them.
      await rig.browser.waitForLog('assistant', turn, ANSWER_TIMEOUT_MS);
    } finally {
      const seen = await rig.browser.stop();
      await others.stop();
      receipts = seen.deltas.filter((d) => d.turn === measured);
      liveReceipts = receipts;
    }
  } else if (kind === 'watch') {
    let turnDone!: () => void;
    const until = new Promise<void>((resolve) => (turnDone = resolve));
    const watchers = startWatchers(client, handle, viewers, measured, until);
    try {
      await watchers.attached;
      await turnOf(handle);
    } finally {
      turnDone();
      await watchers.ended;
    }
    liveReceipts = watchers.heartbeats;
    receipts = [...watchers.heartbeats, ...watchers.answers];
  } else {
    await turnOf(handle);
  }
  await quiet(handle);
  const after = await meter.read();
  const history = await handle.fetchHistory();
  await endSession(handle);
  ctx.sends.delete(model);

  const actions: ActionCounts = actionsBetween(before, after);
  const latencies = pieceLatencies(sent, settings.chunkSize, text.length, receipts);
  const times = sent.map((s) => s.at);
  return {
    path: kind,
    ...(kind === 'gateway' ? { transport: rig.transport } : {}),
    viewers,
    pieces,
    streamingMs: times.length > 1 ? round(Math.max(...times) - Math.min(...times)) : 0,
    actions,
    totalActions: totalActions(actions),
    heartbeats: actions.grpc_RecordActivityTaskHeartbeat ?? 0,
    latency: summarize(latencies),
    piecesLive: pieceLatencies(sent, settings.chunkSize, text.length, liveReceipts).length,
    historyEvents: history.events?.length ?? 0,
    historyBytes: Buffer.byteLength(JSON.stringify(history)),
  };
}

/** Sends the turn's message and waits for its outcome, returning its number; a turn that did not complete is the run's failure. */
async function turnOf(handle: SessionHandle): Promise<number> {
  const result = await sendAndWait(handle, 'Stream your answer, please.');
  if (result.status !== 'completed' || result.turn === undefined) throw new Error(`bench stream: the turn of ${handle.workflowId} ended ${result.status}${result.failure ? `: ${result.failure.type}` : ''}`);
  return result.turn;
}

/** `pieces` pieces of `chunkSize` characters each, numbered, so a page's text shows where it is. */
export function answerOf(pieces: number, chunkSize: number): string {
  return Array.from({ length: pieces }, (_, i) => `t${i}`.padEnd(chunkSize, ' ').slice(0, chunkSize)).join('');
}

/** How long a session may take to finish the workflow task its turn left behind (the status upsert, the idle timer). */
const QUIET_TIMEOUT_MS = 30_000;

/** Waits until the session has no workflow task pending: every command of its turn has been counted. */
async function quiet(handle: SessionHandle): Promise<void> {
  for (const deadline = Date.now() + QUIET_TIMEOUT_MS; (await handle.describe()).raw.pendingWorkflowTask; ) {
    if (Date.now() > deadline) throw new Error(`bench stream: session ${handle.workflowId} still has a workflow task pending after ${QUIET_TIMEOUT_MS} ms`);
    await sleep(50);
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
