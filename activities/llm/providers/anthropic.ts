import type { AnthropicThinkingBlock, LlmRequest, Message, Reasoning, StopReason, ToolCall } from '../../../contracts/messages';
import { classifyStreamError } from '../classify';
import { forbidsToolCalls } from '../compaction-request';
import { assistantMessage, isPlainObject, modelName, tokenCount, toolInputFromText, toolInputFromValue } from './assistant-message';
import { endedWithoutSentinel, frameJson, joinUrl, openEventStream, ownEntry, requireCompleteToolCalls, wireString } from './event-stream';
import { stableTools } from './stable-tools';
import { mergeTurns, type Turn } from './turns';
import type { ProviderStream } from './types';

/**
 * Anthropic Messages API, streamed. `POST {baseUrl}/v1/messages`.
 * Terminal sentinel: the `message_stop` event. Anthropic sends `event: ping` frames while
 * the model works; they are bytes, so they keep the idle timer and the heartbeat alive.
 */

const PROVIDER = 'anthropic' as const;
const API_VERSION = '2023-06-01';

/** A cache breakpoint: Anthropic caches the request's prefix up to and including the block that carries it. */
const CACHE_CONTROL = { type: 'ephemeral' } as const;
type Breakpoint = { cache_control?: typeof CACHE_CONTROL };

type Block =
  | AnthropicThinkingBlock
  | ({ type: 'text'; text: string } & Breakpoint)
  | ({ type: 'tool_use'; id: string; name: string; input: Record<string, unknown> } & Breakpoint)
  | ({ type: 'tool_result'; tool_use_id: string; content: string; is_error?: true } & Breakpoint);

/** Thinking budgets for the named levels; a number is taken as the budget itself. */
const THINKING_BUDGETS = { low: 2_048, medium: 8_192, high: 24_576 } as const;

/**
 * The body, with its keys in cache order (tools, system, messages) so that what a prompt
 * cache matches on is also a byte prefix of the body; see `stableTools`.
 *
 * With prompt caching (the default) there are three breakpoints of Anthropic's four: the
 * last tool, the system prompt, and the last block of the newest message, which is the
 * prefix of the next step's request.
 *
 * Anthropic counts thinking against `max_tokens` and wants the budget below it. A budget
 * that fits under the session's cap stays within it (raising the cap could pass the
 * model's own output limit); one that does not raises the cap by the budget, so the
 * answer keeps the room the session gave it.
 */
export function anthropicRequestBody(request: LlmRequest) {
  const cache = request.promptCacheKey !== undefined;
  const budget = thinkingBudget(request.reasoning);
  const tools = stableTools(request.tools).map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
  const messages = toAnthropicMessages(request.messages);
  if (cache) markNewestMessage(messages);
  return {
    model: request.model,
    max_tokens: budget === undefined || budget < request.maxTokens ? request.maxTokens : request.maxTokens + budget,
    ...(budget === undefined ? {} : { thinking: { type: 'enabled', budget_tokens: budget } }),
    ...(tools.length > 0 ? { tools: cache ? tools.map((t, i) => (i === tools.length - 1 ? { ...t, cache_control: CACHE_CONTROL } : t)) : tools } : {}),
    ...(request.system ? { system: cache ? [{ type: 'text', text: request.system, cache_control: CACHE_CONTROL }] : request.system } : {}),
    messages,
    // A compaction's summary must be text: the tools stay (its conversation holds tool blocks), calling them does not.
    ...(tools.length > 0 && forbidsToolCalls(request) ? { tool_choice: { type: 'none' } } : {}),
    stream: true,
  };
}

function thinkingBudget(reasoning: Reasoning | undefined): number | undefined {
  if (reasoning === undefined || reasoning === 'off') return undefined;
  return typeof reasoning === 'number' ? reasoning : THINKING_BUDGETS[reasoning];
}

/** Thinking blocks cannot carry a breakpoint; the newest message's last other block does. */
function markNewestMessage(messages: { content: Block[] }[]): void {
  const blocks = messages[messages.length - 1]?.content ?? [];
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i]!;
    if (block.type === 'thinking' || block.type === 'redacted_thinking') continue;
    blocks[i] = { ...block, cache_control: CACHE_CONTROL };
    return;
  }
}

function toAnthropicMessages(messages: Message[]) {
  const turns: Turn<'user' | 'assistant', Block>[] = messages.map((m) => {
    switch (m.role) {
      case 'user':
        // Anthropic rejects an empty text block.
        return { role: 'user', blocks: m.text ? [{ type: 'text', text: m.text }] : [] };
      case 'assistant':
        return {
          role: 'assistant',
          blocks: [
            // The reply's thinking, exactly as it came and before everything else: with
            // thinking on, a tool turn without it (or with it altered) is rejected.
            ...(m.providerData?.provider === PROVIDER ? m.providerData.thinking : []),
            ...(m.text ? [{ type: 'text' as const, text: m.text }] : []),
            ...m.toolCalls.map((c) => ({ type: 'tool_use' as const, id: c.id, name: c.name, input: c.input })),
          ],
        };
      case 'tool':
        return {
          role: 'user',
          blocks: [{ type: 'tool_result', tool_use_id: m.toolCallId, content: m.content, ...(m.code !== 'ok' && { is_error: true as const }) }],
        };
    }
  });
  return mergeTurns(turns, (b) => b.type === 'tool_result').map((t) => ({ role: t.role, content: t.blocks }));
}

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

/**
 * The token counts as last reported. `message_start` gives them all; `message_delta`
 * repeats some of them, cumulatively, and a count it carries replaces the earlier one
 * (newer API versions report the final input count there, which may differ).
 */
interface RawUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
  thinking_tokens: number;
}

export const streamAnthropic: ProviderStream = async (request, call) => {
  const url = joinUrl(call.baseUrl, '/v1/messages');
  const headers: Record<string, string> = { 'anthropic-version': API_VERSION };
  if (call.apiKey) headers['x-api-key'] = call.apiKey;
  const { endpoint, events, progress } = await openEventStream(PROVIDER, call, url, headers, anthropicRequestBody(request));

  const tools = new Map<number, ToolBlock>();
  const thinking = new Map<number, AnthropicThinkingBlock>();
  const raw: RawUsage = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0, thinking_tokens: 0 };
  let stopReason: StopReason = 'end_turn';
  let responseModel: string | undefined;
  let stopped = false;

  for await (const ev of events) {
    const data = frameJson(PROVIDER, ev.data, endpoint);
    if (!isPlainObject(data)) continue;
    const index = typeof data.index === 'number' ? data.index : -1;
    switch (data.type) {
      case 'message_start':
        // Sent twice by some gateways; the second one says the same.
        readUsage(raw, isPlainObject(data.message) && isPlainObject(data.message.usage) ? data.message.usage : {});
        responseModel = (isPlainObject(data.message) ? modelName(data.message.model) : undefined) ?? responseModel;
        break;
      case 'content_block_start': {
        const block = isPlainObject(data.content_block) ? data.content_block : {};
        if (block.type === 'tool_use') {
          tools.set(index, { id: wireString(block.id), name: wireString(block.name), json: '', startInput: block.input });
          progress.toolCallStarted();
        } else if (block.type === 'text' && typeof block.text === 'string') {
          progress.appendText(block.text);
        } else if (block.type === 'thinking') {
          const text = typeof block.thinking === 'string' ? block.thinking : '';
          thinking.set(index, { type: 'thinking', thinking: text, signature: typeof block.signature === 'string' ? block.signature : '' });
          progress.appendThinking(text);
        } else if (block.type === 'redacted_thinking') {
          thinking.set(index, { type: 'redacted_thinking', data: typeof block.data === 'string' ? block.data : '' });
        }
        break;
      }
      case 'content_block_delta': {
        const delta = isPlainObject(data.delta) ? data.delta : {};
        const block = thinking.get(index);
        if (delta.type === 'text_delta' && typeof delta.text === 'string') {
          progress.appendText(delta.text);
        } else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
          const tool = tools.get(index);
          if (tool) tool.json += delta.partial_json;
        } else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string' && block?.type === 'thinking') {
          block.thinking += delta.thinking;
          progress.appendThinking(delta.thinking);
        } else if (delta.type === 'signature_delta' && typeof delta.signature === 'string' && block?.type === 'thinking') {
          block.signature += delta.signature;
        }
        break;
      }
      case 'message_delta': {
        const delta = isPlainObject(data.delta) ? data.delta : {};
        if (typeof delta.stop_reason === 'string') stopReason = ownEntry(STOP_REASONS, delta.stop_reason) ?? 'other';
        readUsage(raw, isPlainObject(data.usage) ? data.usage : {});
        break;
      }
      case 'message_stop':
        stopped = true;
        break;
      case 'error':
        throw classifyStreamError(PROVIDER, data, endpoint);
      default:
        // `ping`, `content_block_stop`, and event types added after this was written.
        break;
    }
    // Nothing useful follows `message_stop`; leaving now releases the connection.
    if (stopped) break;
  }
  if (!stopped) endedWithoutSentinel(PROVIDER, call, 'message_stop', endpoint);

  const toolCalls: ToolCall[] = [...tools.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, t]) => ({ id: t.id, name: t.name, ...(t.json.trim() !== '' ? toolInputFromText(t.json) : toolInputFromValue(t.startInput)) }));
  requireCompleteToolCalls(PROVIDER, toolCalls, endpoint);
  const thinkingBlocks = [...thinking.entries()].sort(([a], [b]) => a - b).map(([, b]) => b);
  return assistantMessage({
    text: progress.text,
    toolCalls,
    stopReason,
    usage: {
      // Anthropic counts cache reads and writes beside `input_tokens`; the total is all of them.
      inputTokens: raw.input_tokens + raw.cache_creation_input_tokens + raw.cache_read_input_tokens,
      outputTokens: raw.output_tokens,
      cacheReadTokens: raw.cache_read_input_tokens,
      cacheWriteTokens: raw.cache_creation_input_tokens,
      reasoningTokens: raw.thinking_tokens,
    },
    responseModel,
    ...(thinkingBlocks.length > 0 ? { providerData: { provider: PROVIDER, thinking: thinkingBlocks } } : {}),
  });
};

function readUsage(raw: RawUsage, u: Record<string, unknown>): void {
  for (const key of ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'output_tokens'] as const) {
    if (u[key] !== undefined && u[key] !== null) raw[key] = tokenCount(u[key]);
  }
  const details = isPlainObject(u.output_tokens_details) ? u.output_tokens_details : {};
  if (details.thinking_tokens !== undefined && details.thinking_tokens !== null) raw.thinking_tokens = tokenCount(details.thinking_tokens);
}
