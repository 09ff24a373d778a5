import type { LongSessionResult } from './long-session-result';
import { table } from './table';

const KIB = 1024;
const MIB = 1024 * 1024;

/** Section 7 of the report: the long session, one run a row, then the worker's memory. */
export function formatLongSession(r: LongSessionResult): string[] {
  const s = r.settings;
  return [
    `7. Long session: ${s.turns} turns reading ${s.toolResultBytes / KIB} KiB each, window ${s.contextWindow} tokens (compact at ${s.compactAt}), continue-as-new at ${s.continueAsNewAfterEvents} history events:`,
    `   ${r.ranToEnd ? 'ran to the end' : 'DID NOT run to the end'}: ${r.turnsAnswered} turns answered over ${r.runs} runs in ${r.durationS} s;` +
      ` log ${r.log.events} events, ${(r.log.bytes / MIB).toFixed(1)} MiB, ${r.log.compactions} compactions`,
    `   LLM requests: ${r.requests.steps} steps, ${r.requests.compactions} compactions; largest ${r.requests.largestTokens} tokens of a ${s.contextWindow}-token window` +
      ` (${Math.round((r.requests.largestTokens / s.contextWindow) * 100)} %); above the window: ${r.requests.overWindow}`,
    table(
      ['run', 'steps', 'compactions', 'history events', 'history KiB', 'history bytes / step', 'input KiB'],
      r.perRun.map((p) => [p.run, p.steps, p.compactions, p.historyEvents, Math.round(p.historyBytes / KIB), p.historyBytesPerStep, Math.round(p.inputBytes / KIB)]),
    ),
    `   worker memory after GC: ${r.memory.map((m) => `turn ${m.atTurn} ${m.rssMb} MB RSS, ${m.heapMb} MB main-thread heap`).join('; ')}`,
  ];
}
