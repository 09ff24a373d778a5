import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { allRunHistories, type RunHistory } from '../client/run-histories';
import { readSessionLog } from '../client/log-chain';
import type { ScriptedReply } from '../testing/scripted-llm/server';
import { SESSION_WORKFLOW, endUpdate, sendUpdate } from '../contracts/api';
import { jsonBytes } from '../contracts/log-pages';
import type { agentSession } from '../workflows/session';
import { BENCH_WORKSPACE, type BenchEnv } from './bench-env';
import type { LongSessionResult, LongSessionSettings } from './long-session-result';
import { uniqueModel } from './scripted-turn';
import { round } from './stats';

/** Distinct files the turns read in turn: the tool results differ without 300 files on disk. */
const FILES = 10;
const MB = 1024 * 1024;
/** Long enough that the session never ends by itself while the benchmark drives it. */
const IDLE_TIMEOUT_MS = 30 * 60_000;

/**
 * Benchmark 7: one session of `turns` turns on a fresh worker process. Each turn reads a
 * file of `toolResultBytes` (one read_file call, then a short answer), so the log grows
 * by that much a turn, far past the window and past what one run could carry. The scripted
 * LLM is given the same window as the session and refuses, as a provider would, any
 * request above it. Measured: whether every turn is answered, the largest request, each
 * run's history per step, and the worker's memory at the start, middle and end.
 */
export async function measureLongSession(env: BenchEnv, settings: LongSessionSettings, progress: (line: string) => void = () => {}): Promise<LongSessionResult> {
  const files = await writeFiles(settings.toolResultBytes);
  const model = uniqueModel('long-session');
  env.llm.setContextWindow(model, settings.contextWindow);
  env.llm.script(model, ...Array.from({ length: settings.turns }, (_, i) => turnReplies(files, i)).flat());
  const worker = await env.startWorker('agent');
  const started = performance.now();
  try {
    const memory: LongSessionResult['memory'] = [];
    const measureMemory = async (atTurn: number) => {
      const stats = await worker.statsAfterGc();
      memory.push({ atTurn, rssMb: round(stats.rssBytes / MB, 1), heapMb: round(stats.heapUsedBytes / MB, 1) });
    };
    // Before any turn (the worker has not loaded the workflow bundle yet), once warm, halfway, at the end.
    const memoryTurns = [Math.round(settings.turns / 10), Math.floor(settings.turns / 2), settings.turns];
    await measureMemory(0);
    const handle = await env.client.workflow.start<typeof agentSession>(SESSION_WORKFLOW, {
      taskQueue: worker.taskQueue,
      workflowId: `bench-${model}`,
      args: [
        {
          model: `anthropic:${model}`,
          contextWindow: settings.contextWindow,
          compactAt: settings.compactAt,
          continueAsNewAfterEvents: settings.continueAsNewAfterEvents,
          idleTimeoutMs: IDLE_TIMEOUT_MS,
        },
      ],
    });
    let turnsAnswered = 0;
    for (let turn = 1; turn <= settings.turns; turn++) {
      const outcome = await handle.executeUpdate(sendUpdate, { args: [{ text: `Read ${files[(turn - 1) % files.length]} and say what it holds.` }] });
      if (outcome.status !== 'completed' || outcome.reason !== 'answered') {
        throw new Error(`bench: long session turn ${turn} ended ${outcome.status}/${outcome.reason ?? outcome.failure?.type ?? '?'}: ${outcome.failure?.message ?? ''}`);
      }
      turnsAnswered++;
      if (memoryTurns.includes(turn)) await measureMemory(turn);
      if (turn % 50 === 0) progress(`long session: ${turn}/${settings.turns} turns`);
    }
    // The log is read while the worker runs: a closed run's Queries are answered by replaying it.
    const log = await readSessionLog(env.client.workflow, handle.workflowId);
    await handle.executeUpdate(endUpdate);
    const result = await env.client.workflow.getHandle(handle.workflowId).result();
    const histories = await allRunHistories(env.client.workflow, handle.workflowId);
    const requests = env.llm.requests({ model });
    const turnEnds = log.filter((e) => e.type === 'turn/end').map((e) => e.turn);
    const inOrder = log.every((e, i) => e.seq === i) && turnEnds.every((turn, i) => turn === i + 1);
    return {
      settings,
      durationS: Math.round((performance.now() - started) / 1000),
      ranToEnd: turnsAnswered === settings.turns && result.turns === settings.turns && turnEnds.length === settings.turns && inOrder,
      turnsAnswered,
      runs: histories.length,
      log: { events: log.length, bytes: jsonBytes(log), compactions: log.filter((e) => e.type === 'context/compacted').length },
      requests: {
        steps: requests.filter((r) => r.purpose === 'step').length,
        compactions: requests.filter((r) => r.purpose === 'compact').length,
        largestTokens: Math.max(...requests.map((r) => r.tokens)),
        overWindow: requests.filter((r) => r.replyKind === 'over_window').length,
      },
      perRun: histories.map(runPoint),
      memory,
    };
  } finally {
    await worker.stop();
  }
}

/** A turn: read one file, then answer in a line. */
function turnReplies(files: readonly string[], i: number): ScriptedReply[] {
  const file = files[i % files.length] as string;
  return [
    { kind: 'tool_calls', calls: [{ name: 'read_file', input: { path: file } }] },
    { kind: 'text', text: `${file} holds ${i % 7} tables and a summary.` },
  ];
}

/** `FILES` text files of `bytes` bytes each in the benchmark's workspace; their workspace paths. */
async function writeFiles(bytes: number): Promise<string[]> {
  const dir = path.join(BENCH_WORKSPACE, 'long-session');
  await mkdir(dir, { recursive: true });
  return Promise.all(
    Array.from({ length: FILES }, async (_, f) => {
      const line = (n: number) => `file ${f} line ${String(n).padStart(5, '0')}: measured value ${(n * 7919 + f * 104_729) % 100_000} units, status ok\n`;
      let text = '';
      for (let n = 0; text.length < bytes; n++) text += line(n);
      const name = `long-session/report-${f}.txt`;
      await writeFile(path.join(BENCH_WORKSPACE, name), text.slice(0, bytes));
      return name;
    }),
  );
}

/** A run's history: its size per step LLM call, and what it was given. */
function runPoint(history: RunHistory, index: number): LongSessionResult['perRun'][number] {
  const { events } = JSON.parse(history.json) as { events: HistoryEventJson[] };
  const llmCalls = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callLlm');
  const compactions = llmCalls.filter((e) => summaryOf(e).includes(' · compact · ')).length;
  const steps = llmCalls.length - compactions;
  const input = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  return {
    run: index + 1,
    steps,
    compactions,
    historyEvents: history.events,
    historyBytes: history.json.length,
    historyBytesPerStep: steps === 0 ? 0 : round(history.json.length / steps, 1),
    inputBytes: input === undefined ? 0 : Buffer.from(input, 'base64').length,
  };
}

interface HistoryEventJson {
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string } };
  workflowExecutionStartedEventAttributes?: { input?: { payloads?: { data?: string }[] } };
  userMetadata?: { summary?: { data?: string } };
}

/** An activity's summary (the Temporal UI's line), a JSON string payload. */
function summaryOf(event: HistoryEventJson): string {
  const data = event.userMetadata?.summary?.data;
  return data === undefined ? '' : String(JSON.parse(Buffer.from(data, 'base64').toString('utf8')));
}
