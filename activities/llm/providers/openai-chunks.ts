import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { StopReason, ToolCall, Usage } from '../../../contracts/messages';
import { toolInputFromText } from './assistant-message';
import { ownEntry } from './event-stream';
import type { ProgressTracker } from './progress';
import { anyValue, count, fields, jsonObject, modelName, optional } from './wire-fields';

/**
 * One Chat Completions chunk, as far as the adapter reads it. OpenAI and the servers that
 * copy it (Ollama, vLLM, LM Studio, llama.cpp) send all sorts here; see `wire-fields`.
 */
const toolCallPiece = z.object({
  index: optional(z.number()),
  id: optional(z.string()),
  function: fields({
    name: optional(z.string()),
    // A few servers send the arguments already parsed.
    arguments: optional(z.union([z.string(), jsonObject])),
  }),
});

const choice = z.object({
  index: anyValue,
  delta: fields({
    content: optional(z.string()),
    // vLLM, DeepSeek and Ollama stream a reasoning model's thinking beside the content.
    reasoning_content: optional(z.string()),
    refusal: optional(z.string()),
    // None in place of a piece that is no object: the position of the others counts.
    tool_calls: optional(z.array(optional(toolCallPiece))),
  }),
  finish_reason: optional(z.string()),
});

/** Cached input is part of `prompt_tokens`, reasoning part of `completion_tokens`. */
const usage = z.object({
  prompt_tokens: count,
  completion_tokens: count,
  prompt_tokens_details: fields({ cached_tokens: count }),
  completion_tokens_details: fields({ reasoning_tokens: count }),
});

/** None for a frame that is no JSON object. */
export const openAiChunk = optional(
  z.object({
    error: anyValue,
    usage: optional(usage),
    model: modelName,
    choices: optional(z.array(optional(choice))),
  }),
);

export type OpenAiChunk = NonNullable<z.infer<typeof openAiChunk>>;
type ToolCallPiece = z.infer<typeof toolCallPiece>;

const FINISH_REASONS: Record<string, StopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

interface ToolSlot {
  id: string;
  name: string;
  args: string;
}

/** The answer so far, chunk by chunk: what `streamOpenAi` assembles its message from. */
export class OpenAiReply {
  readonly #slots = new Map<string, ToolSlot>();
  usage: Required<Usage> = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
  #stopReason: StopReason = 'end_turn';
  responseModel: string | undefined;
  #refused = false;
  /** A `finish_reason` came: the answer is whole, only the usage may still be missing. */
  finished = false;

  constructor(private readonly progress: ProgressTracker) {}

  take(chunk: OpenAiChunk): void {
    if (chunk.usage) {
      const u = chunk.usage;
      this.usage = {
        inputTokens: u.prompt_tokens,
        outputTokens: u.completion_tokens,
        cacheReadTokens: u.prompt_tokens_details.cached_tokens,
        cacheWriteTokens: 0,
        reasoningTokens: u.completion_tokens_details.reasoning_tokens,
      };
    }
    // Every chunk names the model; some compatible servers leave it empty on a few.
    this.responseModel = chunk.model ?? this.responseModel;
    const first = chunk.choices?.find((c) => c != null && (c.index ?? 0) === 0);
    if (first == null) return;
    const { delta } = first;
    if (delta.content != null) this.progress.appendText(delta.content);
    if (delta.reasoning_content != null) this.progress.appendThinking(delta.reasoning_content);
    if (delta.refusal != null && delta.refusal !== '') {
      this.#refused = true;
      this.progress.appendText(delta.refusal);
    }
    delta.tool_calls?.forEach((piece, position) => {
      if (piece != null) this.#addToolCallPiece(piece, position);
    });
    if (first.finish_reason != null && first.finish_reason !== '') {
      this.finished = true;
      this.#stopReason = ownEntry(FINISH_REASONS, first.finish_reason) ?? 'other';
    }
  }

  get stopReason(): StopReason {
    return this.#refused ? 'refusal' : this.#stopReason;
  }

  get toolCalls(): ToolCall[] {
    return [...this.#slots.values()].map((s) => ({ id: s.id || generatedId(), name: s.name, ...toolInputFromText(s.args) }));
  }

  /**
   * Tool calls arrive in pieces keyed by `index`: the first piece brings `id` and `name`,
   * the rest bring more `arguments` text. Servers that send each call whole (older Ollama)
   * may omit `index`; the `id`, then the position in the chunk, stand in for it.
   */
  #addToolCallPiece(piece: ToolCallPiece, position: number): void {
    const key = piece.index != null ? `index:${piece.index}` : piece.id ? `id:${piece.id}` : `position:${position}`;
    let slot = this.#slots.get(key);
    if (!slot) {
      slot = { id: '', name: '', args: '' };
      this.#slots.set(key, slot);
      this.progress.toolCallStarted();
    }
    if (!slot.id && piece.id != null) slot.id = piece.id;
    const fn = piece.function;
    if (!slot.name && fn.name != null) slot.name = fn.name;
    if (typeof fn.arguments === 'string') slot.args += fn.arguments;
    else if (fn.arguments != null) slot.args = JSON.stringify(fn.arguments);
  }
}

/** For servers that send a call without an id: unique within the session, not just the reply. */
function generatedId(): string {
  return `call_${randomBytes(9).toString('hex')}`;
}
