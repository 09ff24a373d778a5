import type { ActionsResult } from './actions-result';
import { table } from './table';

/** The actions benchmark's tables: one session's actions metered and from history beside the minimum, an idle hour, and the client's reads. */
export function formatActions(r: ActionsResult): string {
  const s = r.session;
  const byCount = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort(([, a], [, b]) => b - a)
      .map(([type, n]): [string, number] => [type, n]);
  const line = (counts: Record<string, number>) => byCount(counts).map(([type, n]) => `${n} ${type}`).join(', ') || 'none';
  return [
    `Billable actions: one session, one turn of ${s.llmCalls} steps (${s.toolCalls} calculator calls), started with its message; ${r.settings.runs} run(s), the median shown (metered totals ${r.meteredTotals.join(', ')}); ${r.durationS} s in all.`,
    `Minimum ${s.minimum} (1 start, ${s.llmCalls} LLM activities, ${s.toolCalls} tool activities, 1 Update): metered ${s.meteredTotal} (+${s.meteredTotal - s.minimum}), from history ${s.historyTotal} (+${s.historyTotal - s.minimum}).`,
    table(['metered action_type', 'actions'], byCount(s.metered)),
    table(['from history (Cloud rules)', 'actions'], byCount(s.fromHistory)),
    `A later turn in the same session: metered ${s.laterTurn.meteredTotal} against a minimum of ${s.laterTurn.minimum} (+${s.laterTurn.meteredTotal - s.laterTurn.minimum}): ${line(s.laterTurn.metered)}.`,
    `Ending the session: ${line(s.endMetered)}.`,
    `Idle for ${r.idle.seconds} s: ${line(r.idle.metered)} (${r.idle.perHour} an hour).`,
    `One LLM call streaming for ${r.streaming.seconds} s: ${line(r.streaming.metered)}; ${r.streaming.heartbeatsPerMinute} heartbeats a minute of streaming.`,
    `\`watch\` following that turn for ${r.streaming.watch.seconds} s, a round every 500 ms: ${r.streaming.watch.queries} Queries.`,
    `Client reads, once each: state ${line(r.client.state)}; log ${line(r.client.log)}; list ${line(r.client.list)}.`,
  ].join('\n\n');
}
