import type { AssistantMessage } from './messages';
import { parseModelRef, type ProviderId } from './model-ref';

/**
 * Span attributes of an LLM call by the OpenTelemetry GenAI semantic conventions, shared by
 * the call's span (in the session) and its attempts' spans (in the activity). Never the
 * prompt, the answer or a key: what is sent and received stays in the session log.
 */
export type SpanAttributes = Record<string, string | number | string[]>;

/** `gen_ai.system` by the conventions' names of the providers. */
const GEN_AI_SYSTEM: Record<ProviderId, string> = { anthropic: 'anthropic', openai: 'openai', google: 'gcp.gemini' };

export function genAiRequestAttributes(modelRef: string): SpanAttributes {
  const { provider, model } = parseModelRef(modelRef);
  return { 'gen_ai.operation.name': 'chat', 'gen_ai.system': GEN_AI_SYSTEM[provider], 'gen_ai.request.model': model };
}

/**
 * What the reply says about itself. The adapters do not keep the model name a provider
 * echoes, so `gen_ai.response.model` is the model the request named and was answered by.
 */
export function genAiResponseAttributes(modelRef: string, message: AssistantMessage): SpanAttributes {
  const { usage } = message;
  return {
    'gen_ai.response.model': parseModelRef(modelRef).model,
    'gen_ai.response.finish_reasons': [message.stopReason],
    'gen_ai.usage.input_tokens': usage.inputTokens,
    'gen_ai.usage.output_tokens': usage.outputTokens,
    ...(usage.cacheReadTokens === undefined ? {} : { 'gen_ai.usage.cache_read_input_tokens': usage.cacheReadTokens }),
    ...(usage.cacheWriteTokens === undefined ? {} : { 'gen_ai.usage.cache_creation_input_tokens': usage.cacheWriteTokens }),
    ...(usage.reasoningTokens === undefined ? {} : { 'gen_ai.usage.reasoning_tokens': usage.reasoningTokens }),
    ...(message.costUsd === undefined || message.costUsd === null ? {} : { 'agent.cost_usd': message.costUsd }),
  };
}
