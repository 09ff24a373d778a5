import type { SessionEvent } from './session-log';

/**
 * The session log is read in pages because a Query's answer is one payload, and Temporal
 * refuses payloads above 2 MiB: a log of a few big tool results would otherwise become
 * unreadable, to the client and to the LLM activity alike.
 */
export const LOG_PAGE_BYTES = 1024 * 1024;

const encoder = new TextEncoder();

/** UTF-8 bytes, which is what the payload limit counts; string length undercounts non-ASCII text. */
export function jsonBytes(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).length;
}

/** Events from `fromSeq` on, as many as fit in `maxBytes`, and always at least one. */
export function logPage(events: readonly SessionEvent[], fromSeq: number, maxBytes: number): SessionEvent[] {
  const page: SessionEvent[] = [];
  let bytes = 0;
  for (let seq = Math.max(0, fromSeq); seq < events.length; seq++) {
    const event = events[seq] as SessionEvent;
    bytes += jsonBytes(event);
    if (page.length > 0 && bytes > maxBytes) break;
    page.push(event);
  }
  return page;
}

/** Reads pages from `fromSeq` until `uptoSeq` (exclusive) or the end of the log. */
export async function readLogPages(
  fetchPage: (fromSeq: number) => Promise<SessionEvent[]>,
  uptoSeq = Number.POSITIVE_INFINITY,
  fromSeq = 0,
): Promise<SessionEvent[]> {
  const events: SessionEvent[] = [];
  while (fromSeq + events.length < uptoSeq) {
    const page = await fetchPage(fromSeq + events.length);
    if (page.length === 0) break;
    events.push(...page);
  }
  return events.slice(0, Math.max(0, uptoSeq - fromSeq));
}
