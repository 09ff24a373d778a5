import type { Latency, StreamResult } from './stream-result';
import { table } from './table';

const KIB = 1024;

/** The stream benchmark's table: one turn a row, then each transport alone. */
export function formatStream(r: StreamResult): string {
  const s = r.settings;
  const alone = r.runs.find((run) => run.path === 'none');
  const ms = (l: Latency) => (l.n === 0 ? '–' : `${l.p50} / ${l.p95} / ${l.max}`);
  return [
    `Live stream: answers of ${s.pieces} (and ${s.longPieces}) pieces of ${s.chunkSize} characters, ${s.pieceDelayMs} ms apart; ${r.durationS} s in all.`,
    'Actions: the dev server\'s `action` counter, from before the viewers joined to after they left (the turn\'s own included).',
    'Latency: the scripted LLM\'s write of a piece to the first viewer holding it (gateway: a Chromium page\'s delta; watch: a heartbeat it polled, or the log).',
    table(
      ['path', 'transport', 'viewers', 'pieces', 'actions', 'over the turn alone', 'heartbeats', 'heartbeats / min', 'latency p50 / p95 / max ms', 'pieces live', 'history KiB'],
      r.runs.map((run) => [
        run.path,
        run.transport ?? '',
        run.viewers,
        run.pieces,
        run.totalActions,
        alone && run !== alone ? run.totalActions - alone.totalActions : null,
        run.heartbeats,
        run.streamingMs > 0 ? Math.round((run.heartbeats / run.streamingMs) * 60_000) : null,
        ms(run.latency),
        `${run.piecesLive}/${run.pieces}`,
        Math.round((run.historyBytes / KIB) * 10) / 10,
      ]),
    ),
    'Each transport alone, publisher to subscriber in one process:',
    table(
      ['transport', 'frames received', 'latency p50 / p95 / max ms'],
      r.hops.map((hop) => [hop.transport, `${hop.received}/${hop.frames}`, ms(hop.latency)]),
    ),
  ].join('\n');
}
