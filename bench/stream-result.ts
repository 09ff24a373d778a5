import { z } from 'zod';

/**
 * What `npm run bench -- --only stream` measures (bench/stream.ts), as the JSON it writes to
 * bench/results/: a schema, so test/bench-stream.test.ts reads the file back through it.
 * Latencies are milliseconds, null when no piece arrived.
 */

export const StreamTransportSchema = z.enum(['embedded', 'nats']);
export type StreamTransport = z.infer<typeof StreamTransportSchema>;

export const StreamSettingsSchema = z.strictObject({
  /** Pieces of text in a turn's answer: `chunkSize` characters each (4: about a token), `pieceDelayMs` apart. */
  pieces: z.number().int().positive(),
  chunkSize: z.number().int().positive(),
  pieceDelayMs: z.number().int().nonnegative(),
  /** The numbers of viewers each path is measured with, such as 1, 10 and 100. */
  viewers: z.array(z.number().int().positive()).min(1),
  /** A longer answer, watched by one viewer: whether the cost grows with the tokens. */
  longPieces: z.number().int().positive(),
  /** The live stream's transports measured end to end (the gateway's rows); `nats` starts the pinned nats-server (harness/nats-server.ts). */
  transports: z.array(StreamTransportSchema).min(1),
  /** Frames sent through each transport alone, publisher to subscriber, for its own latency. */
  hopFrames: z.number().int().positive(),
});
export type StreamSettings = z.infer<typeof StreamSettingsSchema>;

const ms = z.number().nullable();
export const LatencySchema = z.strictObject({ n: z.number().int(), p50: ms, p95: ms, max: ms });
export type Latency = z.infer<typeof LatencySchema>;

/** One turn, and what its viewers cost and saw. */
export const StreamRunSchema = z.strictObject({
  /** `gateway`: the event stream (one real Chromium page, the rest plain HTTP readers); `watch`: client/watch.ts polling; `none`: the turn alone. */
  path: z.enum(['gateway', 'watch', 'none']),
  /** The live stream the worker published on (the gateway's rows). */
  transport: StreamTransportSchema.optional(),
  viewers: z.number().int().nonnegative(),
  pieces: z.number().int().positive(),
  /** From the scripted LLM's first piece to its last. */
  streamingMs: z.number(),
  /** Billable actions from before the viewers joined to after they left, by `action_type`. */
  actions: z.record(z.string(), z.number()),
  totalActions: z.number(),
  /** Heartbeats the LLM activity sent to the server in this turn (`grpc_RecordActivityTaskHeartbeat`). */
  heartbeats: z.number(),
  /** Piece latency, scripted LLM's send to the first viewer's receipt: gateway rows by delta only, watch rows by heartbeat or log. */
  latency: LatencySchema,
  /** Pieces the first viewer received live (a delta, or for watch a heartbeat), before the log's answer. */
  piecesLive: z.number().int(),
  /** The session's workflow history after the turn: how it grows (or not) with the tokens. */
  historyEvents: z.number().int(),
  historyBytes: z.number().int(),
});
export type StreamRun = z.infer<typeof StreamRunSchema>;

/** A transport alone: frames with their send time, publisher to subscriber in one process. */
export const TransportHopSchema = z.strictObject({ transport: StreamTransportSchema, frames: z.number().int(), received: z.number().int(), latency: LatencySchema });
export type TransportHop = z.infer<typeof TransportHopSchema>;

export const StreamResultSchema = z.strictObject({
  settings: StreamSettingsSchema,
  runs: z.array(StreamRunSchema).min(1),
  hops: z.array(TransportHopSchema),
  durationS: z.number(),
});
export type StreamResult = z.infer<typeof StreamResultSchema>;
