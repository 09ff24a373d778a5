import { formatActions } from './actions-report';
import { CLI_TARGETS } from './cli-speed';
import { formatOpenSessions } from './open-sessions-report';
import { formatLongSession } from './long-session-report';
import type { BenchResult } from './result';
import { table } from './table';

/** The human-readable report `npm run bench` prints: one section per benchmark, then the targets. */
export function formatReport(r: BenchResult): string {
  const m = r.machine;
  const o = r.overhead;
  const t = r.throughput;
  const h = r.history;
  const out: string[] = [];
  out.push(
    `Benchmark (${r.scale}) · ${m.date} · ${m.nproc} CPUs (${m.cpuModel}) · ${m.memTotalGb} GB RAM (${m.memFreeGb} GB free) · Node ${m.node} · ${m.platform}`,
    `load average before ${m.loadBefore.join(' / ')}, after ${m.loadAfter.join(' / ')} · ${r.durationS} s · bundling (${r.bundlingMs} ms) excluded from every figure`,
    `dev server ${r.server.version}, in memory, headless; dynamic config ${JSON.stringify(r.server.dynamicConfig)}`,
    '',
    `1. Per-step latency: turns of ${o.settings.steps} steps (1 LLM call + 3 calculator calls; the LLM answers at once), one at a time,`,
    `   ${o.settings.runs} runs after ${o.settings.warmupRuns} warm-up runs; median over runs of each run's p50 and p95.`,
    table(
      ['loop', 'p50 ms', 'p95 ms', 'steps', 'turn ms / step'],
      [
        ['plain in-process loop', o.plain.p50, o.plain.p95, o.plain.n, o.turnMsPerStep.plain],
        ['Temporal: agent session', o.temporal.p50, o.temporal.p95, o.temporal.n, o.turnMsPerStep.temporal],
        ['Temporal: floor (no-op activities)', o.floor.p50, o.floor.p95, o.floor.n, o.turnMsPerStep.floor],
        ['Temporal: floor doing the agent\'s I/O', o.ioFloor.p50, o.ioFloor.p95, o.ioFloor.n, o.turnMsPerStep.ioFloor],
      ],
    ),
    `   agent step ÷ the I/O floor's, p50: ${o.temporalToIoFloor} (target ≤ 1.15: the rest is orchestration)`,
    `   overhead over the plain loop: ${o.overheadP50Ms} ms p50, ${o.overheadP95Ms} ms p95; ÷ floor step: ${o.overheadToFloor} (whole step ÷ floor step: ${o.temporalToFloor})`,
    '   where a step goes (medians from server event times; "dispatch" = scheduled → started, "run" = started → completed):',
    table(
      ['loop', 'WFTs / step', 'events / step', 'WFT dispatch', 'WFT run', 'LLM act. dispatch', 'LLM act. run', '…start → LLM request', '…LLM request', 'tools run (slowest)'],
      (['temporal', 'floor'] as const).map((k) => {
        const a = o.anatomy[k];
        return [k === 'temporal' ? 'agent session' : 'floor', a.workflowTasksPerStep, a.eventsPerStep, a.workflowTaskDispatchMs, a.workflowTaskRunMs, a.llmActivityDispatchMs, a.llmActivityRunMs, a.llmStartToRequestMs, a.llmRequestMs, a.toolActivitiesRunMs];
      }),
    ),
    '',
    `2. Throughput: concurrent sessions of ${t.stepsPerSession} steps, concurrency raised until steps/s stops rising; each level is the median of its windows.`,
    table(
      ['workflow', 'sessions at once', 'steps/s', 'windows steps/s', 'p50 step ms', 'p95 step ms', 'worker CPU %', 'worker RSS MB', 'bench+LLM CPU %', 'server CPU %', 'worker CPU ms/step', 'server CPU ms/step'],
      [...t.floor.levels.map((l) => ['floor', l] as const), ...t.ioFloor.levels.map((l) => ['I/O floor', l] as const), ...t.agent.levels.map((l) => ['agent', l] as const)].map(([workflow, l]) => [
        workflow,
        l.concurrency,
        l.stepsPerSec,
        l.windowStepsPerSec.join(' / '),
        l.p50StepMs,
        l.p95StepMs,
        l.workerCpuPct,
        l.workerRssMb,
        l.benchCpuPct,
        l.serverCpuPct,
        l.workerCpuMsPerStep,
        l.serverCpuMsPerStep,
      ]),
    ),
    `   CPU % is of one core (${m.nproc} cores in all). The plain loop costs ${o.plainCpuMsPerStep} ms CPU per step, the scripted LLM's share included.`,
    `   peak: agent ${t.agent.peak.stepsPerSec} steps/s at ${t.agent.peak.concurrency}, floor ${t.floor.peak.stepsPerSec} steps/s at ${t.floor.peak.concurrency}: agent = ${Math.round(t.agentToFloor * 100)} % of the floor`,
    `   the I/O floor's peak: ${t.ioFloor.peak.stepsPerSec} steps/s at ${t.ioFloor.peak.concurrency}: agent = ${Math.round(t.agentToIoFloor * 100)} % of it (target ≥ 85 %)`,
    '',
    '3. History growth: one session per length, one turn of that many steps, measured when the turn has ended.',
    table(
      ['steps', 'events', 'bytes (JSON)', 'bytes / step'],
      h.points.map((p) => [p.steps, p.events, p.bytes, p.bytesPerStep]),
    ),
    `   bytes(${h.ratio.top}) ÷ bytes(${h.ratio.base}) = ${h.ratio.value} (linear ≈ ${h.ratio.linear}, quadratic ≈ ${h.ratio.quadratic}); ` +
      `bytes added per step: ${h.marginalBytesPerStep.first} (first lengths), ${h.marginalBytesPerStep.last} (last lengths)`,
    `   largest session by event type: ${h.breakdown
      .slice(0, 6)
      .map((b) => `${b.eventType} ${b.count}× ${Math.round(b.bytes / 1024)} KB`)
      .join(', ')}`,
    '',
    `4. Replay: ${r.replay.steps}-step history (${r.replay.events} events), Worker.runReplayHistory with a prebuilt bundle, ${r.replay.runs} runs:` +
      ` median ${r.replay.medianMs} ms, max ${r.replay.maxMs} ms${r.replay.succeeded ? '' : ` — FAILED: ${r.replay.error ?? ''}`}`,
    '',
    `5. Memory: ${r.memory.sessions} idle sessions, ${r.memory.cachedWorkflows} of them in the worker's cache at the end; worker baseline ${r.memory.baselineRssMb} MB RSS:`,
    `   started and idle: ${r.memory.rssPerSessionKb} KB RSS, ${r.memory.heapPerSessionKb} KB main-thread heap per session;` +
      ` idle again after a ${r.memory.stepsPerSession}-step turn: ${r.memory.afterTurnRssPerSessionKb} KB RSS, ${r.memory.afterTurnHeapPerSessionKb} KB main-thread heap per session`,
  );
  out.push(
    '',
    `6. CLI start (compiled, npm run build), whole process, median of ${r.cli.runs}:` +
      ` agent --help ${r.cli.agentHelpMs} ms (target ≤ ${CLI_TARGETS.agentHelpMs}), agent list ${r.cli.agentListMs} ms (target ≤ ${CLI_TARGETS.agentListMs}), temporal --help ${r.cli.temporalHelpMs} ms;` +
      ` fastest runs ${r.cli.fastest.agentHelpMs}, ${r.cli.fastest.agentListMs} and ${r.cli.fastest.temporalHelpMs} ms`,
  );
  if (r.longSession) out.push('', ...formatLongSession(r.longSession));
  if (r.actions) out.push('', `8. ${formatActions(r.actions)}`);
  if (r.sessions) out.push('', `9. ${formatOpenSessions(r.sessions)}`);
  if (r.workerOptions) {
    out.push(
      '',
      'Worker options (agent worker; latency one session at a time; load at a fixed concurrency):',
      table(
        ['option', 'value', 'server', 'step p50 ms', 'step p95 ms', 'sessions at once', 'steps/s', 'load p95 ms', 'worker CPU %', 'worker RSS MB'],
        r.workerOptions.map((w) => [w.option, w.value, Object.keys(w.serverConfig).length === 0 ? 'as above' : 'own', w.stepP50Ms, w.stepP95Ms, w.concurrency, w.stepsPerSec, w.loadP95StepMs, w.workerCpuPct, w.workerRssMb]),
      ),
      ...r.workerOptions.filter((w) => w.error).map((w) => `   ${w.option} = ${w.value}: FAILED: ${w.error}`),
    );
  }
  out.push('', 'Targets:', table(['target', 'value', 'wanted', 'met'], r.targets.map((x) => [x.name, x.value, x.target, x.met ? 'yes' : 'NO'])));
  return out.join('\n');
}
