import { usageOf } from './conversation';
import type { Usage } from './messages';
import type { SessionEvent } from './session-log';
import { spendBeyond, spendOf, type Spend } from './spend';

/**
 * What a fork carries beside its events (the input's `fork`): what its source spent beyond
 * them, and the source's step count and token usage at the cut, which a fork given only the
 * tail after a compaction cannot count from its events. Pure: the client's `fork` builds it
 * from the source's `state` Query (client/sessions.ts), a session handing its conversation
 * over from its own state (workflows/handoff.ts).
 */

/** The counts a source reports of itself; absent fields come from workers from before they were tracked. */
export interface ForkSource {
  stepsTaken: number;
  spend?: Spend;
  usage?: Required<Usage>;
}

/** What the source spent beyond the kept events; nothing from a source that does not report its spend. */
export function carriedSpend(source: Pick<ForkSource, 'spend'>, kept: readonly SessionEvent[]): { carriedSpend?: Spend } {
  const { spend } = source;
  return spend ? { carriedSpend: spendBeyond(spend, spendOf(kept)) } : {};
}

/**
 * The source's step count and token usage at the cut: its counts now less those of the
 * events after the cut. None from a source that reports neither usage nor spend: the fork
 * counts from its events.
 */
export function countsAtCut(source: ForkSource, after: readonly SessionEvent[]): { stepsTaken?: number; usage?: Required<Usage> } {
  // A source's spend also holds what its own source spent after its cut; its usage does not.
  // Workers from before `usage` was reported give only the spend.
  const used = source.usage ?? source.spend;
  if (!used) return {};
  const stepsAfter = after.filter((e) => e.type === 'step/start').length;
  const usedAfter = usageOf(after);
  const usage = Object.fromEntries(Object.entries(usedAfter).map(([key, tokens]) => [key, Math.max(0, used[key as keyof Usage] - tokens)])) as Required<Usage>;
  return { stepsTaken: Math.max(0, source.stepsTaken - stepsAfter), usage };
}

/**
 * The events a fork cut after `cutSeq` is given, of a log held whole from its first event:
 * those up to the cut, from the last compaction at or before it on (that compaction
 * included), as a run that continues as new carries them.
 */
export function forkTail(events: readonly SessionEvent[], cutSeq: number): SessionEvent[] {
  const kept = events.filter((e) => e.seq <= cutSeq);
  for (let i = kept.length - 1; i >= 0; i--) {
    const e = kept[i];
    if (e?.type === 'context/compacted') return kept.filter((k) => k.seq > e.throughSeq);
  }
  return kept;
}
