import type { LlmRequest, Message, StopReason, ToolCall, Usage } from '../../../workflows/messages';
import { classifyStreamError } from '../classify';
import { assistantMessage, isPlainObject, tokenCount, toolInputFromText, toolInputFromValue } from './assistant-message';
import { endedWithoutSentinel, frameJson, joinUrl, openEventStream } from './event-stream';
import { mergeTurns, type Turn } from './turns';
import type { ProviderStream } from './types';

/**
 * Anthropic Messages API, streamed. `POST {baseUrl}/v1/messages`.
 * Terminal sentinel: the `message_stop` event. Anthropic sends `event: ping` frames while
 * the model works; they are bytes, so they keep the idle timer and the heartbeat alive.
 */

const PROVIDER = 'anthropic';
const API_VERSION = '2023-06-01';

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: true };

export function anthropicRequestBody(request: LlmRequest) {
  return {
    model: request.model,
    max_tokens: request.maxTokens,
    ...(request.system ? { system: request.system } : {}),
    messages: toAnthropicMessages(request.messages),
    ...(request.tools.length > 0
      ? { tools: request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema })) }
      : {}),
    stream: true,
  };
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

export const streamAnthropic: ProviderStream = async (request, call) => {
  const url = joinUrl(call.baseUrl, '/v1/messages');
  const headers: Record<string, string> = { 'anthropic-version': API_VERSION };
  if (call.apiKey) headers['x-api-key'] = call.apiKey;
  const { endpoint, events, progress } = await openEventStream(PROVIDER, call, url, headers, anthropicRequestBody(request));

  const tools = new Map<number, ToolBlock>();
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  let stopReason: StopReason = 'end_turn';
  let stopped = false;

  for await (const ev of events) {
    const data = frameJson(PROVIDER, ev.data, endpoint);
    if (!isPlainObject(data)) continue;
    switch (data.type) {
      case 'message_start': {
        const u = isPlainObject(data.message) && isPlainObject(data.message.usage) ? data.message.usage : {};
        usage.inputTokens = inputTokens(u);
        usage.outputTokens = tokenCount(u.output_tokens);
        break;
      }
      case 'content_block_start': {
        const block = isPlainObject(data.content_block) ? data.content_block : {};
        const index = typeof data.index === 'number' ? data.index : tools.size;
        if (block.type === 'tool_use') {
          tools.set(index, { id: String(block.id ?? ''), name: String(block.name ?? ''), json: '', startInput: block.input });
          progress.toolCallStarted();
        } else if (block.type === 'text' && typeof block.text === 'string') {
          progress.appendText(block.text);
        }
        break;
      }
      case 'content_block_delta': {
        const delta = isPlainObject(data.delta) ? data.delta : {};
        if (delta.type === 'text_delta' && typeof delta.text === 'string') {
          progress.appendText(delta.text);
        } else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
          const tool = tools.get(typeof data.index === 'number' ? data.index : -1);
          if (tool) tool.json += delta.partial_json;
        }
        // thinking_delta / signature_delta: not part of the neutral message.
        break;
      }
      case 'message_delta': {
        const delta = isPlainObject(data.delta) ? data.delta : {};
        if (typeof delta.stop_reason === 'string') stopReason = STOP_REASONS[delta.stop_reason] ?? 'other';
        // Cumulative counts; newer API versions repeat the input side here too.
        const u = isPlainObject(data.usage) ? data.usage : {};
        if (u.output_tokens !== undefined) usage.outputTokens = tokenCount(u.output_tokens);
        if (tokenCount(u.input_tokens) > 0) usage.inputTokens = inputTokens(u);
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
    .map(([, t]) => ({ id: t.id, name: t.name, ...(t.json !== '' ? toolInputFromText(t.json) : toolInputFromValue(t.startInput)) }));
  return assistantMessage({ text: progress.text, toolCalls, stopReason, usage });
};

/** Prompt-cache reads and writes are input too: they fill the context window and the bill. */
function inputTokens(u: Record<string, unknown>): number {
  return tokenCount(u.input_tokens) + tokenCount(u.cache_creation_input_tokens) + tokenCount(u.cache_read_input_tokens);
}
