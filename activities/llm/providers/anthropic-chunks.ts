import { z } from 'zod';
import type { AnthropicThinkingBlock, StopReason, ToolCall, Usage } from '../../../contracts/messages';
import { toolInputFromText, toolInputFromValue } from './assistant-message';
import { ownEntry } from './event-stream';
import type { ProgressTracker } from './progress';
import { anyValue, countIfSent, fields, modelName, optional, wireText } from './wire-fields';

/**
 * One Messages API event, as far as the adapter reads it; see `wire-fields`. The token
 * counts are those a chunk carries: `message_start` gives them all, `message_delta`
 * repeats some of them, cumulatively.
 */
const usage = fields({
  input_tokens: countIfSent,
  cache_creation_input_tokens: countIfSent,
  cache_read_input_tokens: countIfSent,
  output_tokens: countIfSent,
  output_tokens_details: fields({ thinking_tokens: countIfSent }),
});

const text = optional(z.string());
/** A block's `index`; anything but a number is -1, which no block has. */
const blockIndex = z.number().catch(-1);

const event = z.discriminatedUnion('type', [
  z.object({ type: z.literal('message_start'), message: fields({ usage, model: modelName }) }),
  z.object({
    type: z.literal('content_block_start'),
    index: blockIndex,
    content_block: fields({ type: anyValue, id: wireText, name: wireText, input: anyValue, text, thinking: text, signature: text, data: text }),
  }),
  z.object({
    type: z.literal('content_block_delta'),
    index: blockIndex,
    delta: fields({ type: anyValue, text, partial_json: text, thinking: text, signature: text }),
  }),
  z.object({ type: z.literal('message_delta'), delta: fields({ stop_reason: text }), usage }),
  z.object({ type: z.literal('message_stop') }),
  // Read to be ignored: a kind the union does not know takes the slow path of a caught failure.
  z.object({ type: z.literal(['ping', 'content_block_stop']) }),
  z.object({ type: z.literal('error') }),
]);

/** None for a frame that is no JSON object and for event types added after this was written. */
export const anthropicEvent = optional(event);

export type AnthropicEvent = NonNullable<z.infer<typeof anthropicEvent>>;
type RawUsage = z.infer<typeof usage>;

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  refusal: 'refusal',
};

interface ToolBlock {
  id: string;
  name: string;
  json: string;
  startInput: unknown;
}

/** The answer so far, event by event: what `streamAnthropic` assembles its message from. */
export class AnthropicReply {
  readonly #tools = new Map<number, ToolBlock>();
  readonly #thinking = new Map<number, AnthropicThinkingBlock>();
  /**
   * The token counts as last reported: a count a `message_delta` carries replaces the
   * earlier one (newer API versions report the final input count there, which may differ).
   */
  readonly #usage = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0, thinking_tokens: 0 };
  stopReason: StopReason = 'end_turn';
  responseModel: string | undefined;
  /** `message_stop` came: nothing useful follows it. */
  stopped = false;

  /**
   * `answerTool`: the name of the forced final tool of a structured-output request, whose
   * streamed input is the answer: it goes into the progress text too, so `watch` shows
   * the JSON as it grows.
   */
  constructor(
    private readonly progress: ProgressTracker,
    private readonly answerTool?: string,
  ) {}

  take(ev: Exclude<AnthropicEvent, { type: 'error' }>): void {
    switch (ev.type) {
      case 'message_start':
        // Sent twice by some gateways; the second one says the same.
        this.#readUsage(ev.message.usage);
        this.responseModel = ev.message.model ?? this.responseModel;
        break;
      case 'content_block_start': {
        const block = ev.content_block;
        const { index } = ev;
        if (block.type === 'tool_use') {
          this.#tools.set(index, { id: block.id, name: block.name, json: '', startInput: block.input });
          this.progress.toolCallStarted();
        } else if (block.type === 'text' && block.text != null) {
          this.progress.appendText(block.text);
        } else if (block.type === 'thinking') {
          const thinking = block.thinking ?? '';
          this.#thinking.set(index, { type: 'thinking', thinking, signature: block.signature ?? '' });
          this.progress.appendThinking(thinking);
        } else if (block.type === 'redacted_thinking') {
          this.#thinking.set(index, { type: 'redacted_thinking', data: block.data ?? '' });
        }
        break;
      }
      case 'content_block_delta': {
        const { delta } = ev;
        const { index } = ev;
        const block = this.#thinking.get(index);
        if (delta.type === 'text_delta' && delta.text != null) {
          this.progress.appendText(delta.text);
        } else if (delta.type === 'input_json_delta' && delta.partial_json != null) {
          const tool = this.#tools.get(index);
          if (tool) tool.json += delta.partial_json;
          if (tool !== undefined && tool.name === this.answerTool) this.progress.appendText(delta.partial_json);
        } else if (delta.type === 'thinking_delta' && delta.thinking != null && block?.type === 'thinking') {
          block.thinking += delta.thinking;
          this.progress.appendThinking(delta.thinking);
        } else if (delta.type === 'signature_delta' && delta.signature != null && block?.type === 'thinking') {
          block.signature += delta.signature;
        }
        break;
      }
      case 'message_delta':
        if (ev.delta.stop_reason != null) this.stopReason = ownEntry(STOP_REASONS, ev.delta.stop_reason) ?? 'other';
        this.#readUsage(ev.usage);
        break;
      case 'message_stop':
        this.stopped = true;
        break;
    }
  }

  get toolCalls(): ToolCall[] {
    return [...this.#tools.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, t]) => ({ id: t.id, name: t.name, ...(t.json.trim() !== '' ? toolInputFromText(t.json) : toolInputFromValue(t.startInput)) }));
  }

  /** The answer tool's input as the model wrote it (the first call of it, in block order); none when it was not called. */
  get answerJson(): string | undefined {
    if (this.answerTool === undefined) return undefined;
    const [, tool] = [...this.#tools.entries()].sort(([a], [b]) => a - b).find(([, t]) => t.name === this.answerTool) ?? [];
    if (tool === undefined) return undefined;
    return tool.json.trim() !== '' ? tool.json : JSON.stringify(tool.startInput ?? {});
  }

  get thinkingBlocks(): AnthropicThinkingBlock[] {
    return [...this.#thinking.entries()].sort(([a], [b]) => a - b).map(([, b]) => b);
  }

  get usage(): Required<Usage> {
    const raw = this.#usage;
    return {
      // Anthropic counts cache reads and writes beside `input_tokens`; the total is all of them.
      inputTokens: raw.input_tokens + raw.cache_creation_input_tokens + raw.cache_read_input_tokens,
      outputTokens: raw.output_tokens,
      cacheReadTokens: raw.cache_read_input_tokens,
      cacheWriteTokens: raw.cache_creation_input_tokens,
      reasoningTokens: raw.thinking_tokens,
    };
  }

  #readUsage(u: RawUsage): void {
    const raw = this.#usage;
    raw.input_tokens = u.input_tokens ?? raw.input_tokens;
    raw.cache_creation_input_tokens = u.cache_creation_input_tokens ?? raw.cache_creation_input_tokens;
    raw.cache_read_input_tokens = u.cache_read_input_tokens ?? raw.cache_read_input_tokens;
    raw.output_tokens = u.output_tokens ?? raw.output_tokens;
    raw.thinking_tokens = u.output_tokens_details.thinking_tokens ?? raw.thinking_tokens;
  }
}
