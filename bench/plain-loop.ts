import type { Dispatcher } from 'undici';
import type { ToolRunner } from '../activities/tools';
import { PROVIDER_STREAMS } from '../activities/llm/providers';
import type { Message, ToolCall } from '../contracts/messages';
import type { ToolOutcome } from '../contracts/tools/tool-outcome';
import { SESSION_LIMITS } from '../contracts/session-settings';
import { BUILTIN_TOOLS, prepareToolCall, toolSpecs } from '../contracts/tools/registry';

export interface PlainLoopDeps {
  dispatcher: Dispatcher;
  /** The scripted LLM's base URL. */
  baseUrl: string;
  runTool: ToolRunner;
}

/** The session's default `maxTokens`, so both loops send the same request. */
const MAX_TOKENS = SESSION_LIMITS.maxTokens.default;

/** A plain loop's conversation so far, and the calls its last reply asked for. */
export interface PlainConversation {
  messages: Message[];
  pending: ToolCall[];
}

export const startPlainConversation = (text: string): PlainConversation => ({ messages: [{ role: 'user', text }], pending: [] });

/**
 * One step of the plain loop: the previous step's `results` (one per pending call, in call
 * order) into the conversation, then one LLM call with the same provider adapter the LLM
 * activity uses; answers the calls its reply asks for, none when it answered.
 */
export async function runPlainStep(deps: PlainLoopDeps, conversation: PlainConversation, model: string, results: readonly ToolOutcome[] | undefined, signal: AbortSignal): Promise<ToolCall[]> {
  const { messages } = conversation;
  conversation.pending.forEach((call, i) => {
    const outcome = results?.[i] ?? { code: 'error' as const, content: 'no result' };
    messages.push({ role: 'tool', toolCallId: call.id, name: call.name, code: outcome.code, content: outcome.content });
  });
  const reply = await PROVIDER_STREAMS.anthropic(
    { model, messages, tools: TOOL_SPECS, maxTokens: MAX_TOKENS },
    { dispatcher: deps.dispatcher, baseUrl: deps.baseUrl, apiKey: 'bench-key', signal, idleTimeoutMs: 90_000 },
  );
  messages.push({ role: 'assistant', text: reply.text, toolCalls: reply.toolCalls });
  conversation.pending = reply.toolCalls;
  return reply.toolCalls;
}

/** One tool call, checked and run by the same tool runner the tool activity uses. */
export async function runPlainTool(deps: PlainLoopDeps, call: ToolCall, signal: AbortSignal): Promise<ToolOutcome> {
  const prepared = prepareToolCall(call, BUILTIN_TOOLS);
  if (prepared.kind === 'invalid') return { code: 'error', content: prepared.content };
  return deps.runTool({ name: call.name, input: prepared.input, callId: call.id }, { signal });
}

const TOOL_SPECS = toolSpecs(BUILTIN_TOOLS);

/**
 * The agent loop without Temporal: the same provider adapter and the same tool runner
 * the activities use, called directly, with the conversation in memory. Tool calls of a
 * step run in parallel, as the session's read-only calls do. This is the baseline our
 * per-step overhead is measured against.
 */
export async function runPlainTurn(deps: PlainLoopDeps, model: string, text: string, maxSteps: number): Promise<number> {
  const conversation = startPlainConversation(text);
  const signal = new AbortController().signal;
  let results: ToolOutcome[] | undefined;
  for (let step = 1; step <= maxSteps; step++) {
    const calls = await runPlainStep(deps, conversation, model, results, signal);
    if (calls.length === 0) return step;
    results = await Promise.all(calls.map((call) => runPlainTool(deps, call, signal)));
  }
  return maxSteps;
}
