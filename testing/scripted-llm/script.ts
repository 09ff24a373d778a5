import { z } from 'zod';

/**
 * What the scripted LLM answers, one reply per request, in the order they were scripted
 * for a model. The same reply plays on all three wire formats, so a test can run one
 * script against every provider.
 *
 * Every object is strict: a misspelt field (`chunk_size`) is an error, not a reply that
 * silently behaves differently from what the test author meant.
 *
 * Options every reply accepts (all off by default):
 * - `delayMs`       wait this long before sending the response headers.
 * - `chunkDelayMs`  wait this long between two frames of a stream.
 * - `stall`         `{ ms, pingEveryMs? }`: pause after the first content frame (or after the
 *                   first frame when there is no content). `ms: -1` hangs until the client
 *                   goes away or the server closes. With `pingEveryMs` the pause is filled
 *                   with the provider's keep-alive frames (Anthropic `event: ping`, SSE
 *                   comments `: keep-alive` for OpenAI and Gemini); without it, silence.
 * - `hold`          `true`: before anything else, wait until `release(model)` is called
 *                   (or `POST /_scripted/_release?model=…`), for a test that needs the request
 *                   in flight at a moment of its choosing. `holdTimeoutMs` (default 30 000)
 *                   bounds the wait; when it passes the reply plays as if released.
 * - `holdMidStream` `true`: the same wait, after the first content frame (where `stall`
 *                   pauses), for a test that needs the client to hold part of the text, and
 *                   the rest still to come, at a moment of its choosing.
 * - `usage`         `{ inputTokens, outputTokens }` (and optionally `cacheReadTokens`,
 *                   `cacheWriteTokens`, `reasoningTokens`, parts of those totals) to report
 *                   instead of the estimate (about one token per four characters).
 * - `answeredBy`    the model name the stream says answered (Anthropic `message.model`,
 *                   OpenAI each chunk's `model`, Gemini `modelVersion`) instead of the one
 *                   requested, as a provider answers an alias with a dated snapshot.
 *
 * Text and tool-call replies also take `thinking`: the model's visible reasoning, streamed
 * before the answer when the request turns thinking on (Anthropic `thinking`, Gemini
 * `includeThoughts`), as a signed Anthropic thinking block or a Gemini thought part.
 *
 * Tool call pairing (pairing.ts): a request with a tool call whose result is not where the
 * provider looks for it, or a result that answers no call, is refused with that provider's
 * own 400 invalid-request error, plays no scripted reply and is recorded with
 * `replyKind: 'unpaired'`, so a test asserts that none happened with
 * `requests({ model, replyKind: 'unpaired' })`.
 *
 * Context windows and compaction (server.ts has the calls, control-api.ts the routes):
 * - A request counts one token per four characters of its JSON (context-window.ts), which
 *   is also the input a reply reports when its `usage` is not scripted.
 * - `setContextWindow(model, tokens)` (or `startScriptedLlm({ contextWindow })` for every
 *   model, `--context-window N` on the command line) gives the model a window. A request
 *   above it is refused with the provider's own context-overflow error (Anthropic 400
 *   `prompt is too long: N tokens > W maximum`, OpenAI 400 `context_length_exceeded`,
 *   Gemini 400 `INVALID_ARGUMENT` "The input token count (N) exceeds the maximum number of
 *   tokens allowed (W)."), which the agent classifies as `context_overflow`. The refusal
 *   plays no scripted reply and is recorded with `replyKind: 'over_window'`, so a test
 *   asserts that none happened with `requests({ model, replyKind: 'over_window' })`.
 * - A compaction request (its last user message starts with the agent's
 *   COMPACTION_INSTRUCTION) is recorded with `purpose: 'compact'` and answered from the
 *   model's compaction replies (`scriptCompaction(model, …replies)`), never from its step
 *   replies; with none scripted, with a default summary naming how many messages it
 *   summarised (`replyKind: 'summary'`).
 * - The reply `{ kind: 'context_overflow' }` answers one request with the provider's
 *   context-overflow error whatever its size (`contextWindow` sets the window the message
 *   names; default one token less than the request). Script it N times for N requests.
 *
 * Rate limits (rate-limit.ts; `setRateLimit(model, { requests?, inputTokens?, outputTokens?,
 * windowMs })`, `startScriptedLlm({ rateLimit })` or `--rate-limit JSON` for every model,
 * `POST /_scripted/_rate_limit?model=…`): a request above the model's sliding window is
 * refused with the provider's own 429 (Anthropic `rate_limit_error` with `retry-after`,
 * OpenAI `rate_limit_exceeded`, Gemini `RESOURCE_EXHAUSTED` with a `RetryInfo`), plays no
 * scripted reply and is recorded with `replyKind: 'rate_limited'`; every answer of a limited
 * model carries the provider's rate-limit headers (rate-limit-wire.ts). `windowPeak(requests,
 * windowMs)` (window-peak.ts) is the most any window held, for a test's "never exceeded".
 */

const DurationMs = z.number().int().nonnegative();

const ReplyOptions = {
  delayMs: DurationMs.optional(),
  chunkDelayMs: DurationMs.optional(),
  stall: z
    .strictObject({
      /** How long the pause lasts; -1 hangs until the client goes away. */
      ms: z.number().int().min(-1),
      /** Keep-alive frames during the pause, every this many ms. Silent when absent. */
      pingEveryMs: z.number().int().positive().optional(),
    })
    .optional(),
  hold: z.boolean().optional(),
  holdMidStream: z.boolean().optional(),
  holdTimeoutMs: z.number().int().positive().optional(),
  answeredBy: z.string().min(1).optional(),
  usage: z
    .strictObject({
      /** All the input, cached or not. */
      inputTokens: z.number().int().nonnegative(),
      /** All the output, reasoning included. */
      outputTokens: z.number().int().nonnegative(),
      /** The parts of those totals, each reported in its provider's own field. */
      cacheReadTokens: z.number().int().nonnegative().optional(),
      cacheWriteTokens: z.number().int().nonnegative().optional(),
      reasoningTokens: z.number().int().nonnegative().optional(),
    })
    .optional(),
};

/** Characters per streamed piece of text or tool arguments. Default 8. */
const ChunkSize = z.number().int().positive().optional();

/**
 * The neutral stop reason, translated per provider: OpenAI `stop`/`tool_calls`/`length`,
 * Gemini `STOP`/`MAX_TOKENS`.
 */
export const ScriptedStopReasonSchema = z.enum(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence']);
export type ScriptedStopReason = z.infer<typeof ScriptedStopReasonSchema>;

export const ScriptedToolCallSchema = z
  .strictObject({
    /** Defaults to a fresh provider-shaped id (`toolu_…`, `call_…`). Gemini sends no ids. */
    id: z.string().min(1).optional(),
    name: z.string().min(1),
    /** The arguments, sent as JSON text split over several frames. Default `{}`. */
    input: z.record(z.string(), z.unknown()).optional(),
    /**
     * The argument text exactly as sent, e.g. invalid JSON. Gemini carries arguments as
     * an object, not text: there, text that parses as JSON is sent parsed and anything
     * else is sent as a JSON string in `args`, which no real Gemini would do.
     */
    rawArguments: z.string().optional(),
  })
  .refine((call) => call.input === undefined || call.rawArguments === undefined, {
    message: 'give either input or rawArguments, not both',
  });
export type ScriptedToolCall = z.infer<typeof ScriptedToolCallSchema>;

/**
 * Shapes a provider error body. Each field overrides the provider's default for the status:
 * - Anthropic: `errorType` is `error.type` (`overloaded_error`), `message` is `error.message`
 *   (e.g. `prompt is too long: 210000 tokens > 200000 maximum`); `code` is unused.
 * - OpenAI: `errorType` is `error.type`, `code` is `error.code` (`context_length_exceeded`,
 *   `insufficient_quota`, `rate_limit_exceeded`); a known code brings its real message and type.
 * - Gemini: `errorType` is `error.status` (`RESOURCE_EXHAUSTED`); `error.code` is the HTTP status.
 */
const ErrorShape = {
  errorType: z.string().min(1).optional(),
  message: z.string().optional(),
  code: z.string().min(1).optional(),
};

/** Default when thinking is on and the reply names none. */
const Thinking = z.string().min(1).optional();

export const TextReplySchema = z.strictObject({
  kind: z.literal('text'),
  text: z.string(),
  thinking: Thinking,
  chunkSize: ChunkSize,
  /** Default `end_turn`. */
  stopReason: ScriptedStopReasonSchema.optional(),
  ...ReplyOptions,
});

export const ToolCallsReplySchema = z.strictObject({
  kind: z.literal('tool_calls'),
  /** Text streamed before the calls. */
  text: z.string().optional(),
  calls: z.array(ScriptedToolCallSchema).min(1),
  thinking: Thinking,
  chunkSize: ChunkSize,
  /** Default `tool_use`. */
  stopReason: ScriptedStopReasonSchema.optional(),
  ...ReplyOptions,
});

/**
 * A structured answer: `value` as JSON, in the form the request asked for it
 * (wire/structured-output.ts): the answer's text for OpenAI (`response_format`) and Gemini
 * (`responseMimeType: application/json`), and for Anthropic a call of the `final_answer`
 * tool when the request offers that tool, else text. Whether it matches the request's
 * schema is the script's business: a test scripts a wrong one to see it repaired.
 */
export const JsonReplySchema = z.strictObject({
  kind: z.literal('json'),
  /** The JSON value the model answers. */
  value: z.json(),
  thinking: Thinking,
  chunkSize: ChunkSize,
  ...ReplyOptions,
});

/**
 * The model declines, as each provider says so: Anthropic streams the text and stops with
 * `stop_reason: "refusal"`, OpenAI streams it as `refusal` deltas, and Gemini blocks the
 * prompt outright (`promptFeedback.blockReason`, no candidate).
 */
export const RefusalReplySchema = z.strictObject({
  kind: z.literal('refusal'),
  /** Default `I can't help with that.` */
  text: z.string().min(1).optional(),
  /** Gemini's block reason. Default `SAFETY`. */
  blockReason: z.string().min(1).optional(),
  ...ReplyOptions,
});

/** A complete reply with no content: the terminal sentinel is present. */
export const EmptyReplySchema = z.strictObject({
  kind: z.literal('empty'),
  ...ReplyOptions,
});

/** An HTTP error instead of a stream. */
export const StatusReplySchema = z.strictObject({
  kind: z.literal('status'),
  status: z.number().int().min(400).max(599),
  /** Sent as they are, e.g. `{ 'retry-after': '3' }`. */
  headers: z.record(z.string(), z.string()).optional(),
  /** The body verbatim (an object is sent as JSON). Default: the provider's error body for the status. */
  body: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
  ...ErrorShape,
  ...ReplyOptions,
});

/**
 * The provider's context-overflow refusal (an HTTP 400 in each provider's words), as if the
 * request were larger than the model's window, whatever its real size.
 */
export const ContextOverflowReplySchema = z.strictObject({
  kind: z.literal('context_overflow'),
  /** The window the error names. Default: one token less than the request. */
  contextWindow: z.number().int().positive().optional(),
  ...ReplyOptions,
});

/** Some content, then a clean end of the response without the terminal sentinel. */
export const TruncateReplySchema = z.strictObject({
  kind: z.literal('truncate'),
  text: z.string().optional(),
  chunkSize: ChunkSize,
  ...ReplyOptions,
});

/**
 * Some content, then the provider's in-stream error frame, then the end of the response.
 * Defaults are each provider's "overloaded": Anthropic `overloaded_error`, OpenAI
 * `server_error`, Gemini `UNAVAILABLE` (code 503).
 */
export const StreamErrorReplySchema = z.strictObject({
  kind: z.literal('stream_error'),
  text: z.string().optional(),
  chunkSize: ChunkSize,
  ...ErrorShape,
  ...ReplyOptions,
});

/** Some content, then the socket is destroyed: the client sees the connection die mid-body. */
export const ResetReplySchema = z.strictObject({
  kind: z.literal('reset'),
  text: z.string().optional(),
  chunkSize: ChunkSize,
  ...ReplyOptions,
});

/**
 * A complete text reply (default text `ok`) with one data frame that is not valid JSON
 * after the first content frame: a strict client fails there, a lenient one completes.
 */
export const MalformedReplySchema = z.strictObject({
  kind: z.literal('malformed'),
  text: z.string().optional(),
  chunkSize: ChunkSize,
  ...ReplyOptions,
});

export const ScriptedReplySchema = z.discriminatedUnion('kind', [
  TextReplySchema,
  ToolCallsReplySchema,
  JsonReplySchema,
  RefusalReplySchema,
  EmptyReplySchema,
  StatusReplySchema,
  ContextOverflowReplySchema,
  TruncateReplySchema,
  StreamErrorReplySchema,
  ResetReplySchema,
  MalformedReplySchema,
]);
export type ScriptedReply = z.infer<typeof ScriptedReplySchema>;
/** A JSON value, as a `json` reply answers one. */
export type ScriptedJsonValue = z.infer<typeof JsonReplySchema>['value'];
export type ScriptedReplyKind = ScriptedReply['kind'];

export type StatusReply = z.infer<typeof StatusReplySchema>;

export const ScriptedRepliesSchema = z.array(ScriptedReplySchema);

/** Validates replies once, at the boundary, with a message that names the model and the field. */
export function parseReplies(model: string, replies: unknown): ScriptedReply[] {
  const result = ScriptedRepliesSchema.safeParse(replies);
  if (!result.success) {
    throw new Error(`invalid script for model "${model}":\n${z.prettifyError(result.error)}`);
  }
  return result.data;
}
