import type { SessionEvent } from './session-log';

/**
 * A digest of the session log, extended one event at a time.
 *
 * The LLM activity is scheduled with the digest of the conversation it must send, and
 * checks whatever copy of the log it reads against it: the worker's cache (fed by the
 * workflow, see log-sink.ts) or the session's answer to a Query. A copy that is stale,
 * from another run, or diverged (a workflow task that appended and then failed) is never
 * sent, and a session whose own log has changed since is sent with a warning
 * (activities/llm/session-log-cache.ts). It guards against accidents, not adversaries: a fast 64-bit
 * hash of each event's JSON, chained, so extending it costs one pass over the new event.
 */
export const EMPTY_LOG_DIGEST = '0000000000000000';

const hex8 = (n: number) => (n >>> 0).toString(16).padStart(8, '0');
// Bound once: in the workflow sandbox every global lookup is slow, and the loop below
// runs once per character of the log.
const imul = Math.imul;

export function extendLogDigest(digest: string, event: SessionEvent): string {
  return extendDigestWithJson(digest, JSON.stringify(event));
}

/** The same, for a caller that already holds the event's JSON (`JSON.stringify(event)`). */
export function extendDigestWithJson(digest: string, json: string): string {
  let h1 = Number.parseInt(digest.slice(0, 8), 16) ^ 0xdeadbeef;
  let h2 = Number.parseInt(digest.slice(8, 16), 16) ^ 0x41c6ce57;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    h1 = imul(h1 ^ c, 2654435761);
    h2 = imul(h2 ^ c, 1597334677);
  }
  h1 = imul(h1 ^ (h1 >>> 16), 2246822507) ^ imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = imul(h2 ^ (h2 >>> 16), 2246822507) ^ imul(h1 ^ (h1 >>> 13), 3266489909);
  return hex8(h1) + hex8(h2);
}

/** The digest after `events`, starting from `digest` (the digest of what precedes them). */
export function digestOf(events: readonly SessionEvent[], digest = EMPTY_LOG_DIGEST): string {
  return events.reduce(extendLogDigest, digest);
}
