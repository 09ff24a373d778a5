import type { Client } from '@temporalio/client';
import { logQuery } from '../../contracts/api';
import { readLogPages } from '../../contracts/log-pages';
import type { SessionEvent } from '../../contracts/session-log';
import { readLogChain, temporalSessionRuns, type SessionRuns } from '../../client/log-chain';
import { retryQueryTimeouts } from '../../client/query-timeout-retry';

/** Where a follower reads a session's log, the durable truth the live stream only hurries. */
export interface SessionLogSource {
  /** Every event from `fromSeq` on, across runs, and the seq the session's next event gets. */
  read(sessionId: string, fromSeq: number): Promise<{ events: SessionEvent[]; nextSeq: number }>;
  /** The events from `fromSeq` on, for a follower that already holds everything before it. */
  readNew(sessionId: string, fromSeq: number): Promise<SessionEvent[]>;
}

/**
 * The session's log as Temporal holds it. `read` walks the runs (client/log-chain.ts): a
 * describe, a `state` Query per run read and the log's pages (one, for most sessions). `readNew`, which a follower
 * asks every poll and every resync, is one `log` Query of the latest run while that run
 * holds `fromSeq`; only when it does not (the session continued as new since) does it walk
 * the chain.
 */
export function temporalLogSource(client: Pick<Client, 'workflow'>): SessionLogSource {
  return {
    async read(sessionId, fromSeq) {
      const runs = temporalSessionRuns(client.workflow, sessionId);
      const latest = await runs.latest();
      // The chain reader asks for the latest run again: give it the one this read started from,
      // and read up to its end as it said (no page more to find the end): what it appends
      // after comes on the live stream, or in the next read.
      const pinned: SessionRuns = { ...runs, latest: async () => latest };
      const events = await readLogChain(pinned, { fromSeq, uptoSeq: latest.nextSeq });
      return { events, nextSeq: latest.nextSeq };
    },
    async readNew(sessionId, fromSeq) {
      const handle = client.workflow.getHandle(sessionId);
      const events = await readLogPages((seq) => retryQueryTimeouts(() => handle.query(logQuery, { fromSeq: seq })), Number.POSITIVE_INFINITY, fromSeq);
      if (events.every((event, i) => event.seq === fromSeq + i)) return events;
      // A run that starts after `fromSeq`: the events before its first are in the runs before it.
      return (await this.read(sessionId, fromSeq)).events;
    },
  };
}
