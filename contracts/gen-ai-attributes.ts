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

/** The conventions' operation name for a chat completion, as attribute and in the span name. */
const OPERATION = 'chat';

export function genAiRequestAttributes(modelRef: string): SpanAttributes {
  const { provider, model } = parseModelRef(modelRef);
  return { 'gen_ai.operation.name': OPERATION, 'gen_ai.system': GEN_AI_SYSTEM[provider], 'gen_ai.request.model': model };
}

/** An LLM call's span name by the conventions: `{operation} {request model}`, without the provider prefix. */
export function genAiSpanName(modelRef: string): string {
  return `${OPERATION} ${parseModelRef(modelRef).model}`;
}

/**
 * What the reply says about itself. `gen_ai.response.model` is the model the provider
 * said answered (often a dated snapshot of the alias asked for); a stream that named
 * none, or a message recorded before the name was kept, falls back to the one asked for.
 */
export function genAiResponseAttributes(modelRef: string, message: AssistantMessage): SpanAttributes {
  const { usage } = message;
  return {
    'gen_ai.response.model': message.responseModel ?? parseModelRef(modelRef).model,
    'gen_ai.response.finish_reasons': [message.stopReason],
    'gen_ai.usage.input_tokens': usage.inputTokens,
    'gen_ai.usage.output_tokens': usage.outputTokens,
    ...(usage.cacheReadTokens === undefined ? {} : { 'gen_ai.usage.cache_read_input_tokens': usage.cacheReadTokens }),
    ...(usage.cacheWriteTokens === undefined ? {} : { 'gen_ai.usage.cache_creation_input_tokens': usage.cacheWriteTokens }),
    ...(usage.reasoningTokens === undefined ? {} : { 'gen_ai.usage.reasoning_tokens': usage.reasoningTokens }),
    ...(message.costUsd === undefined || message.costUsd === null ? {} : { 'agent.cost_usd': message.costUsd }),
  };
}
