import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { StopReason, ToolCall, Usage } from '../../../contracts/messages';
import { LlmError } from '../llm-error';
import { toolInputFromValue } from './assistant-message';
import { ownEntry } from './event-stream';
import { GeminiPartRecorder } from './gemini-parts';
import type { ProgressTracker } from './progress';
import { anyValue, countIfSent, fields, modelName, optional, wireText } from './wire-fields';

const PROVIDER = 'google';

/** One `streamGenerateContent` chunk, as far as the adapter reads it; see `wire-fields`. */
const part = z.object({
  text: optional(z.string()),
  thought: anyValue,
  thoughtSignature: optional(z.string().min(1)),
  functionCall: optional(z.object({ name: wireText, args: anyValue })),
});

const candidate = z.object({
  content: fields({ parts: optional(z.array(optional(part))) }),
  finishReason: optional(z.string().min(1)),
});

const firstCandidate = optional(candidate);

/**
 * `usageMetadata` is cumulative, and early chunks may carry it without counts; a count
 * replaces the earlier one only when present.
 */
const usageMetadata = z.object({
  promptTokenCount: countIfSent,
  cachedContentTokenCount: countIfSent,
  thoughtsTokenCount: countIfSent,
  candidatesTokenCount: countIfSent,
});

/** None for a frame that is no JSON object. */
export const geminiChunk = optional(
  z.object({
    error: anyValue,
    usageMetadata: optional(usageMetadata),
    modelVersion: modelName,
    // The first candidate is the answer; none when it is no object.
    candidates: optional(z.array(anyValue)).transform((all) => (all == null ? undefined : firstCandidate.parse(all[0]))),
    promptFeedback: optional(z.object({ blockReason: optional(z.string()) })),
  }),
);

export type GeminiChunk = NonNullable<z.infer<typeof geminiChunk>>;

const FINISH_REASONS: Record<string, StopReason> = {
  STOP: 'end_turn',
  MAX_TOKENS: 'max_tokens',
};

/**
 * Finish reasons that mean Google's filters stopped the answer, not the model. The turn
 * fails as `content_blocked`: the partial text is no answer, and the same request would
 * be stopped again.
 */
const BLOCKING_FINISH_REASONS = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

/** The answer so far, chunk by chunk: what `streamGemini` assembles its message from. */
export class GeminiReply {
  /**
   * Gemini gives function calls no id, and the workflow pairs results to calls by id
   * across the WHOLE session, so `gemini_call_1` in every reply would collide on the
   * second turn. A random tag per reply makes them unique; the counter keeps them
   * ordered and readable within it. (A hash of the call would collide when the model
   * repeats a call verbatim, which models do.) Nothing replays this: the activity's
   * result is recorded in history, so the ids need not be reproducible.
   */
  readonly #replyTag = randomBytes(6).toString('hex');
  readonly toolCalls: ToolCall[] = [];
  readonly parts = new GeminiPartRecorder();
  readonly usage: Required<Usage> = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
  stopReason: StopReason = 'end_turn';
  responseModel: string | undefined;
  /** A candidate carried `finishReason`: the answer is whole, only the usage may still be missing. */
  finished = false;

  constructor(
    private readonly progress: ProgressTracker,
    private readonly endpoint: string,
  ) {}

  /** Throws `content_blocked` for a prompt or an answer the filters stopped. */
  take(chunk: GeminiChunk): void {
    if (chunk.usageMetadata) this.#readUsage(chunk.usageMetadata);
    this.responseModel = chunk.modelVersion ?? this.responseModel;
    const first = chunk.candidates;
    // A blocked PROMPT gets no candidate at all, only `promptFeedback.blockReason`.
    if (first == null) {
      const reason = chunk.promptFeedback?.blockReason;
      if (reason != null) throw this.#contentBlocked(`the prompt was blocked (${reason})`);
      return;
    }
    for (const p of first.content.parts ?? []) if (p != null) this.#takePart(p);
    if (first.finishReason != null) {
      if (BLOCKING_FINISH_REASONS.has(first.finishReason)) throw this.#contentBlocked(`the answer was stopped (${first.finishReason})`);
      this.finished = true;
      this.stopReason = ownEntry(FINISH_REASONS, first.finishReason) ?? 'other';
    }
  }

  #contentBlocked(detail: string): LlmError {
    return new LlmError({ type: 'content_blocked', provider: PROVIDER, endpoint: this.endpoint, detail });
  }

  #takePart(p: z.infer<typeof part>): void {
    const signature = p.thoughtSignature ?? undefined;
    const text = p.text ?? '';
    if (p.functionCall != null) {
      this.parts.call(this.toolCalls.length, signature);
      this.toolCalls.push({ id: `gemini_${this.#replyTag}_${this.toolCalls.length + 1}`, name: p.functionCall.name, ...toolInputFromValue(p.functionCall.args) });
      this.progress.toolCallStarted();
    } else if (p.thought === true) {
      // A thought summary: shown apart, never part of the answer.
      this.parts.thought(text, signature);
      this.progress.appendThinking(text);
    } else {
      this.parts.text(text, signature);
      this.progress.appendText(text);
    }
  }

  /**
   * The prompt count includes the cached part; thinking is billed as output and counted
   * against `maxOutputTokens`, but reported apart from `candidatesTokenCount`, so it is
   * added to the output here.
   */
  #readUsage(meta: z.infer<typeof usageMetadata>): void {
    const usage = this.usage;
    if (meta.promptTokenCount != null) usage.inputTokens = meta.promptTokenCount;
    if (meta.cachedContentTokenCount != null) usage.cacheReadTokens = meta.cachedContentTokenCount;
    if (meta.thoughtsTokenCount != null) usage.reasoningTokens = meta.thoughtsTokenCount;
    if (meta.candidatesTokenCount != null || meta.thoughtsTokenCount != null) usage.outputTokens = (meta.candidatesTokenCount ?? 0) + usage.reasoningTokens;
  }
}
