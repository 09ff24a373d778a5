import type { SessionEvent } from './session-log';

/**
 * The session log is read in pages because a Query's answer is one payload, and Temporal
 * refuses payloads above 2 MiB: a log of a few big tool results would otherwise become
 * unreadable, to the client and to the LLM activity alike.
 *
 * Positions are seqs, which are the session's across runs: a run that continued as new
 * holds only the tail of the log, so its first event's seq (its base) may be above 0.
 */
export const LOG_PAGE_BYTES = 1024 * 1024;

const encoder = new TextEncoder();

/** UTF-8 bytes, which is what the payload limit counts; string length undercounts non-ASCII text. */
export function jsonBytes(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).length;
}

/**
 * Events from `fromSeq` on, as many as fit in `maxBytes`, and always at least one.
 * A `fromSeq` below the run's first event answers from that event: what comes before it
 * is in the runs before this one.
 */
export function logPage(events: readonly SessionEvent[], fromSeq: number, maxBytes: number): SessionEvent[] {
  const base = events[0]?.seq ?? 0;
  const page: SessionEvent[] = [];
  let bytes = 0;
  for (let i = Math.max(0, fromSeq - base); i < events.length; i++) {
    const event = events[i] as SessionEvent;
    bytes += jsonBytes(event);
    if (page.length > 0 && bytes > maxBytes) break;
    page.push(event);
  }
  return page;
}

/**
 * Reads pages from `fromSeq` (or the run's first event, when that is later) until `uptoSeq`
 * (exclusive) or the end of the log. Each page is asked for from the seq after the last
 * event read, so a run whose log starts above `fromSeq` is read whole.
 */
export async function readLogPages(
  fetchPage: (fromSeq: number) => Promise<SessionEvent[]>,
  uptoSeq = Number.POSITIVE_INFINITY,
  fromSeq = 0,
): Promise<SessionEvent[]> {
  const events: SessionEvent[] = [];
  let next = fromSeq;
  while (next < uptoSeq) {
    const page = await fetchPage(next);
    const last = page[page.length - 1];
    if (last === undefined) break;
    // A page that does not move forward would be asked for again forever.
    if (last.seq < next) throw new Error(`the log page asked for from seq ${next} ends at seq ${last.seq}`);
    events.push(...page);
    next = last.seq + 1;
  }
  return events.filter((event) => event.seq >= fromSeq && event.seq < uptoSeq);
}
