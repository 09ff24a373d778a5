import type { AnthropicThinkingBlock, LlmRequest, Message, Reasoning, StopReason, ToolCall } from '../../../contracts/messages';
import { OUTPUT_TOOL_NAME, type OutputSpec } from '../../../contracts/structured-output';
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
  const tools = [
    ...stableTools(request.tools).map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema })),
    ...(request.output === undefined ? [] : [answerTool(request.output)]),
  ];
  const system = [request.system, request.output !== undefined && budget !== undefined ? ANSWER_INSTRUCTION : undefined].filter(Boolean).join('\n\n');
  const messages = toAnthropicMessages(request.messages);
  if (cache) markNewestMessage(messages);
  return {
    model: request.model,
    max_tokens: budget === undefined || budget < request.maxTokens ? request.maxTokens : request.maxTokens + budget,
    ...(budget === undefined ? {} : { thinking: { type: 'enabled', budget_tokens: budget } }),
    ...(tools.length > 0 ? { tools: cache ? tools.map((t, i) => (i === tools.length - 1 ? { ...t, cache_control: CACHE_CONTROL } : t)) : tools } : {}),
    ...(system ? { system: cache ? [{ type: 'text', text: system, cache_control: CACHE_CONTROL }] : system } : {}),
    messages,
    // A compaction's summary must be text: the tools stay (its conversation holds tool blocks), calling them does not.
    ...(tools.length > 0 && forbidsToolCalls(request) ? { tool_choice: { type: 'none' } } : {}),
    // Every step calls a tool, the answer tool last; with thinking on Anthropic refuses a
    // forced tool (400 "Thinking may not be enabled when tool_choice forces tool use"), so
    // there the choice stays `auto` and the system prompt asks for the tool.
    ...(request.output !== undefined && budget === undefined ? { tool_choice: { type: 'any' } } : {}),
    stream: true,
  };
}

/**
 * Structured output on Anthropic: a forced final tool whose input is the answer, the mode
 * its API has for every model (the newer `output_config.format` JSON mode is not on every
 * model, and a request naming it to one without it is refused). The adapter turns the
 * tool's call back into the answer's text (finalAnswer), so the workflow reads a
 * structured answer from every provider in the same place.
 */
function answerTool(output: OutputSpec) {
  return {
    name: OUTPUT_TOOL_NAME,
    description: 'Give your final answer with this tool, once the work is done: its input is the answer. Call other tools before it, never beside it.',
    input_schema: output.schema,
  };
}

/** With thinking on, the answer tool cannot be forced: the system prompt asks for it. */
const ANSWER_INSTRUCTION = `When the work is done, give your final answer by calling the ${OUTPUT_TOOL_NAME} tool with the answer as its input.`;

/**
 * The reply as the workflow reads a structured answer: the `final_answer` call's JSON is
 * the message's text (what the model wrote beside it is dropped, as it is no part of the
 * answer), and the call is no tool call, so no tool runs for it and the next request needs
 * no result for it. A reply without the call is left as it came: its text is the answer.
 */
function finalAnswer(reply: AnthropicReply, text: string): { text: string; toolCalls: ToolCall[]; stopReason: StopReason } {
  const calls = reply.toolCalls;
  const answer = reply.answerJson;
  if (answer === undefined) return { text, toolCalls: calls, stopReason: reply.stopReason };
  const others = calls.filter((c) => c.name !== OUTPUT_TOOL_NAME);
  return { text: answer, toolCalls: others, stopReason: others.length === 0 && reply.stopReason === 'tool_use' ? 'end_turn' : reply.stopReason };
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

  const reply = new AnthropicReply(progress, request.output === undefined ? undefined : OUTPUT_TOOL_NAME);
  for await (const ev of events) {
    const frame = frameJson(PROVIDER, ev.data, endpoint);
    const event = anthropicEvent.parse(frame);
    if (event?.type === 'error') throw classifyStreamError(PROVIDER, frame, endpoint);
    if (event != null) reply.take(event);
    // Nothing useful follows `message_stop`; leaving now releases the connection.
    if (reply.stopped) break;
  }
  if (!reply.stopped) endedWithoutSentinel(PROVIDER, call, 'message_stop', endpoint);

  const { thinkingBlocks } = reply;
  requireCompleteToolCalls(PROVIDER, reply.toolCalls, endpoint);
  const { text, toolCalls, stopReason } = finalAnswer(reply, progress.text);
  return assistantMessage({
    text,
    toolCalls,
    stopReason,
    usage: reply.usage,
    responseModel: reply.responseModel,
    ...(thinkingBlocks.length > 0 ? { providerData: { provider: PROVIDER, thinking: thinkingBlocks } } : {}),
  });
};
