import type { Dispatcher } from 'undici';
import type { ToolRunner } from '../activities/tools';
import { PROVIDER_STREAMS } from '../activities/llm/providers';
import type { Message } from '../contracts/messages';
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

/**
 * The agent loop without Temporal: the same provider adapter and the same tool runner
 * the activities use, called directly, with the conversation in memory. Tool calls of a
 * step run in parallel, as the session's read-only calls do. This is the baseline our
 * per-step overhead is measured against.
 */
export async function runPlainTurn(deps: PlainLoopDeps, model: string, text: string, maxSteps: number): Promise<number> {
  const tools = toolSpecs(BUILTIN_TOOLS);
  const messages: Message[] = [{ role: 'user', text }];
  const signal = new AbortController().signal;
  for (let step = 1; step <= maxSteps; step++) {
    const reply = await PROVIDER_STREAMS.anthropic(
      { model, messages, tools, maxTokens: MAX_TOKENS },
      { dispatcher: deps.dispatcher, baseUrl: deps.baseUrl, apiKey: 'bench-key', signal, idleTimeoutMs: 90_000 },
    );
    messages.push({ role: 'assistant', text: reply.text, toolCalls: reply.toolCalls });
    if (reply.toolCalls.length === 0) return step;
    const results = await Promise.all(
      reply.toolCalls.map(async (call) => {
        const prepared = prepareToolCall(call, BUILTIN_TOOLS);
        if (prepared.kind === 'invalid') return { code: 'error' as const, content: prepared.content };
        return deps.runTool({ name: call.name, input: prepared.input, callId: call.id }, { signal });
      }),
    );
    reply.toolCalls.forEach((call, i) => {
      const outcome = results[i] as (typeof results)[number];
      messages.push({ role: 'tool', toolCallId: call.id, name: call.name, code: outcome.code, content: outcome.content });
    });
  }
  return maxSteps;
}
