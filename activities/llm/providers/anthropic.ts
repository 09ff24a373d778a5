import type { AnthropicThinkingBlock, LlmRequest, Message, Reasoning } from '../../../contracts/messages';
import { classifyStreamError } from '../classify';
import { forbidsToolCalls } from '../compaction-request';
import { anthropicEvent, AnthropicReply } from './anthropic-chunks';
import { assistantMessage } from './assistant-message';
import { endedWithoutSentinel, frameJson, joinUrl, openEventStream, requireCompleteToolCalls } from './event-stream';
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

export const streamAnthropic: ProviderStream = async (request, call) => {
  const url = joinUrl(call.baseUrl, '/v1/messages');
  const headers: Record<string, string> = { 'anthropic-version': API_VERSION };
  if (call.apiKey) headers['x-api-key'] = call.apiKey;
  const { endpoint, events, progress } = await openEventStream(PROVIDER, call, url, headers, anthropicRequestBody(request));

  const reply = new AnthropicReply(progress);
  for await (const ev of events) {
    const frame = frameJson(PROVIDER, ev.data, endpoint);
    const event = anthropicEvent.parse(frame);
    if (event?.type === 'error') throw classifyStreamError(PROVIDER, frame, endpoint);
    if (event != null) reply.take(event);
    // Nothing useful follows `message_stop`; leaving now releases the connection.
    if (reply.stopped) break;
  }
  if (!reply.stopped) endedWithoutSentinel(PROVIDER, call, 'message_stop', endpoint);

  const { toolCalls, thinkingBlocks } = reply;
  requireCompleteToolCalls(PROVIDER, toolCalls, endpoint);
  return assistantMessage({
    text: progress.text,
    toolCalls,
    stopReason: reply.stopReason,
    usage: reply.usage,
    responseModel: reply.responseModel,
    ...(thinkingBlocks.length > 0 ? { providerData: { provider: PROVIDER, thinking: thinkingBlocks } } : {}),
  });
};
