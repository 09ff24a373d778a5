import { z } from 'zod';
import type { OutputSpec } from './structured-output';

/**
 * The provider-neutral conversation. Adapters translate it to each wire format;
 * the workflow derives it from the session log and never keeps it beside the log.
 *
 * The assistant message's schemas are built on first use (`z.lazy`): only a log carried
 * into a run (continued, or forked) is parsed with them, and the workflow sandbox builds
 * every module's schemas again for each run it starts.
 */

/**
 * The entries one list of a logged event may hold (calls and blocks of one reply, tools of a
 * listing): far more than any provider takes or sends, which count them in dozens or
 * hundreds, and few enough that a carried log with a list of wrong entries is refused in
 * milliseconds: zod makes an issue of every bad entry.
 */
export const MAX_EVENT_LIST_ENTRIES = 10_000;

export const ToolCallSchema = z.lazy(() =>
  z.object({
    /** The provider's call id (`toolu_…`, `call_…`); Gemini has none, so its adapter makes one. */
    id: z.string().min(1),
    name: z.string().min(1),
    /** The parsed arguments. `{}` when the model's JSON could not be parsed; see `invalidJson`. */
    input: z.record(z.string(), z.unknown()),
    /**
     * The raw argument text when it was not a JSON object. Kept so the tool result can
     * tell the model exactly what was wrong instead of running the tool on `{}`.
     */
    invalidJson: z.string().optional(),
  }),
);
export type ToolCall = z.infer<typeof ToolCallSchema>;

export const StopReasonSchema = z.enum(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'refusal', 'other']);
export type StopReason = z.infer<typeof StopReasonSchema>;

const tokens = z.number().int().nonnegative();

/**
 * Token counts as the provider reported them. `inputTokens` is all the input, cached or
 * not, and `outputTokens` all the output, reasoning included: the three breakdowns are
 * parts of those totals, so the totals stay comparable across providers (Anthropic
 * reports cache reads and writes beside its input count, OpenAI and Gemini inside it).
 * The breakdowns are optional only because messages recorded before they existed lack them.
 */
export const UsageSchema = z.object({
  inputTokens: tokens,
  outputTokens: tokens,
  /** Input read from the provider's prompt cache. */
  cacheReadTokens: tokens.optional(),
  /** Input written to the prompt cache (Anthropic bills it apart; others report 0). */
  cacheWriteTokens: tokens.optional(),
  /** Output spent on reasoning (thinking) rather than on the answer. */
  reasoningTokens: tokens.optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

/**
 * What a provider requires back, unchanged, in the next request, and that means nothing
 * to anyone else. Only the adapter of the same provider sends it; a different provider
 * never sees it (see `conversationOf`).
 *
 * - Anthropic: the thinking and `redacted_thinking` blocks of the reply, in their order,
 *   with their signatures. With extended thinking and tools, the API rejects a tool turn
 *   whose thinking is missing or altered.
 * - Gemini: the reply's parts in order, each with its `thoughtSignature` when it had one.
 *   Answer text is referenced by its length in `text` (not copied), a call by its index in
 *   `toolCalls`. Gemini 3 rejects a function call sent back without its signature, and a
 *   signature may ride on an empty text part.
 */
export const AnthropicThinkingBlockSchema = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() }),
    z.object({ type: z.literal('redacted_thinking'), data: z.string() }),
  ]),
);
export type AnthropicThinkingBlock = z.infer<typeof AnthropicThinkingBlockSchema>;

export const GeminiPartRefSchema = z.lazy(() =>
  z.discriminatedUnion('type', [
    /** `chars` UTF-16 code units of the message's `text`, following the previous text part. */
    z.object({ type: z.literal('text'), chars: z.number().int().nonnegative(), thoughtSignature: z.string().optional() }),
    /** A thought summary: not part of the answer, so kept here whole. */
    z.object({ type: z.literal('thought'), text: z.string(), thoughtSignature: z.string().optional() }),
    z.object({ type: z.literal('call'), index: z.number().int().nonnegative(), thoughtSignature: z.string().optional() }),
  ]),
);
export type GeminiPartRef = z.infer<typeof GeminiPartRefSchema>;

export const ProviderDataSchema = z.lazy(() =>
  z.discriminatedUnion('provider', [
    z.object({ provider: z.literal('anthropic'), thinking: z.array(AnthropicThinkingBlockSchema).max(MAX_EVENT_LIST_ENTRIES) }),
    z.object({ provider: z.literal('google'), parts: z.array(GeminiPartRefSchema).max(MAX_EVENT_LIST_ENTRIES) }),
  ]),
);
export type ProviderData = z.infer<typeof ProviderDataSchema>;

export const AssistantMessageSchema = z.lazy(() =>
  z.object({
    role: z.literal('assistant'),
    text: z.string(),
    toolCalls: z.array(ToolCallSchema).max(MAX_EVENT_LIST_ENTRIES),
    stopReason: StopReasonSchema,
    usage: UsageSchema,
    /**
     * What the call cost in USD by the worker's price table; `null` when the model has no
     * price there (unknown, never 0). Absent in messages recorded before costs were.
     */
    costUsd: z.number().nonnegative().nullable().optional(),
    /**
     * The model that answered, as the provider's stream named it (an alias such as
     * `claude-sonnet-4-5` is answered by a dated snapshot). Absent when the stream named
     * none, and in messages recorded before it was kept.
     */
    responseModel: z.string().min(1).optional(),
    /** Absent when the reply carried nothing the provider needs back. */
    providerData: ProviderDataSchema.optional(),
  }),
);
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;

export const ToolResultCodeSchema = z.enum(['ok', 'error', 'TOOL_OUTCOME_UNKNOWN', 'TOOL_NOT_STARTED']);
export type ToolResultCode = z.infer<typeof ToolResultCodeSchema>;

export interface UserMessage {
  role: 'user';
  text: string;
}

export interface ToolResultMessage {
  role: 'tool';
  toolCallId: string;
  name: string;
  code: ToolResultCode;
  content: string;
}

/** A message of the conversation as a provider is sent it: an assistant message without what only its reply carried. */
export type Message = UserMessage | Omit<AssistantMessage, 'usage' | 'stopReason' | 'costUsd' | 'responseModel'> | ToolResultMessage;

/** A tool as the model sees it: the JSON Schema is derived from the tool's zod schema. */
export const ToolSpecSchema = z.object({
  name: z.string().min(1),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
});
export type ToolSpec = z.infer<typeof ToolSpecSchema>;

/**
 * How hard the model may think before it answers: a level, or a token budget for the
 * thinking. `off` sends nothing, so the provider's own default applies.
 */
export const ReasoningSchema = z.union([z.enum(['off', 'low', 'medium', 'high']), z.number().int().min(1_024).max(128_000)]);
export type Reasoning = z.infer<typeof ReasoningSchema>;

/** One request to a provider, built by the LLM activity from the session's log. */
export interface LlmRequest {
  /** The provider's own model name, without the `provider:` prefix. */
  model: string;
  system?: string;
  messages: Message[];
  tools: ToolSpec[];
  maxTokens: number;
  /** Absent means `off`. */
  reasoning?: Reasoning;
  /**
   * Present when the session caches its prompt prefix (the default): the key OpenAI routes
   * cached prefixes by (the session id). Absent: no cache breakpoints, no key.
   */
  promptCacheKey?: string;
  /**
   * The answer must be a JSON value matching this schema (structured output), sent in the
   * provider's native mode; absent: free text. From the turn's `turn/start` event.
   */
  output?: OutputSpec;
}
