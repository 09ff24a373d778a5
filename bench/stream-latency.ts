import { percentile, round } from './stats';
import type { Latency } from './stream-result';

/**
 * How long each piece of the model's text took from the scripted LLM's socket to a viewer.
 * The scripted LLM says when it wrote each piece (its `onContentSent`: piece `index` covers
 * the text from `index × chunkSize`); a viewer says when it held the text up to some end
 * (a delta's `offset + text.length`, or the characters a heartbeat had streamed). A piece has
 * arrived at the first receipt that reaches its end: a viewer that gets two pieces in one
 * read, or a heartbeat that carries twenty, receives them all at that moment.
 */

/** When the scripted LLM wrote content frame `index` (epoch ms, fractional). */
export interface PieceSent {
  index: number;
  at: number;
}

/** When a viewer held the text up to `end` characters (epoch ms, fractional, the same machine's clock). */
export interface TextReceipt {
  end: number;
  at: number;
}

/**
 * One latency (ms) per piece that arrived, in piece order; pieces that never arrived are
 * left out (the caller compares the count with what was sent).
 */
export function pieceLatencies(sent: readonly PieceSent[], chunkSize: number, textLength: number, receipts: readonly TextReceipt[]): number[] {
  const byTime = [...receipts].sort((a, b) => a.at - b.at);
  const latencies: number[] = [];
  for (const piece of [...sent].sort((a, b) => a.index - b.index)) {
    const end = Math.min((piece.index + 1) * chunkSize, textLength);
    const receipt = byTime.find((r) => r.end >= end);
    if (receipt) latencies.push(receipt.at - piece.at);
  }
  return latencies;
}

/** p50, p95 and the largest, nearest rank (bench/stats.ts): each a latency that was observed. */
export function summarize(latencies: readonly number[]): Latency {
  if (latencies.length === 0) return { n: 0, p50: null, p95: null, max: null };
  return { n: latencies.length, p50: round(percentile(latencies, 50)), p95: round(percentile(latencies, 95)), max: round(Math.max(...latencies)) };
}
