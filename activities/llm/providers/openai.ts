import type { LlmRequest, Message, Reasoning } from '../../../contracts/messages';
import { openAiStrictCompatible } from '../../../contracts/output-compat';
import { OUTPUT_TOOL_NAME, type OutputSpec } from '../../../contracts/structured-output';
import { classifyStreamError } from '../classify';
import { forbidsToolCalls } from '../compaction-request';
import { LlmError } from '../llm-error';
import { assistantMessage } from './assistant-message';
import { endedWithoutSentinel, frameJson, joinUrl, openEventStream, requireCompleteToolCalls } from './event-stream';
import { openAiChunk, OpenAiReply } from './openai-chunks';
import { stableTools } from './stable-tools';
import type { ProviderStream } from './types';

/**
 * OpenAI Chat Completions, streamed, and every server that copies it (Ollama, vLLM,
 * LM Studio, llama.cpp): `POST {baseUrl}/chat/completions`, where `baseUrl` already ends
 * in `/v1` as with the OpenAI SDK. Terminal: `data: [DONE]`, or a chunk with a
 * `finish_reason`, whichever comes; see the end of {@link streamOpenAi}.
 */

const PROVIDER = 'openai';

/**
 * OpenAI caches a prompt's prefix by itself; `prompt_cache_key` (the session id) sends a
 * session's requests to the same cache, and the tools come in a stable order so the prefix
 * stays the same from step to step. Compatible servers ignore the key.
 */
export function openAiRequestBody(request: LlmRequest, baseUrl: string) {
  const effort = reasoningEffort(request.reasoning);
  return {
    model: request.model,
    ...(request.tools.length > 0
      ? {
          tools: stableTools(request.tools).map((t) => ({
            type: 'function',
            function: { name: t.name, description: t.description, parameters: t.inputSchema },
          })),
        }
      : {}),
    messages: toOpenAiMessages(request),
    // A compaction's summary must be text. OpenAI refuses a tool choice without tools.
    ...(request.tools.length > 0 && forbidsToolCalls(request) ? { tool_choice: 'none' } : {}),
    ...(request.output === undefined ? {} : { response_format: responseFormat(request.output) }),
    [maxTokensField(baseUrl)]: request.maxTokens,
    ...(effort === undefined ? {} : { reasoning_effort: effort }),
    ...(request.promptCacheKey === undefined ? {} : { prompt_cache_key: request.promptCacheKey }),
    stream: true,
    // Without it the stream carries no token counts at all.
    stream_options: { include_usage: true },
  };
}

/**
 * Structured output, natively: the answer is text that is JSON of the schema. Strict (the
 * schema compiled into the decoder) when the schema is in OpenAI's strict subset, else
 * non-strict, which OpenAI takes as guidance; the workflow validates the answer either way
 * (contracts/output-compat.ts says why a schema is sent non-strict).
 */
function responseFormat(output: OutputSpec) {
  return { type: 'json_schema', json_schema: { name: OUTPUT_TOOL_NAME, schema: output.schema, strict: openAiStrictCompatible(output.schema) } };
}

/** Chat Completions takes a level only; a token budget becomes the level nearest it. */
function reasoningEffort(reasoning: Reasoning | undefined): 'low' | 'medium' | 'high' | undefined {
  if (reasoning === undefined || reasoning === 'off') return undefined;
  if (typeof reasoning === 'string') return reasoning;
  return reasoning < 4_096 ? 'low' : reasoning < 16_384 ? 'medium' : 'high';
}

/**
 * `max_completion_tokens` for OpenAI itself, `max_tokens` for everyone else. OpenAI's
 * reasoning models (o-series, gpt-5) reject `max_tokens` outright, while Ollama, LM
 * Studio and older vLLM know only `max_tokens` and silently ignore the newer name (so the
 * cap would vanish). Sending both is not an option either: OpenAI refuses `max_tokens`
 * on those models even beside the other. The host decides; Azure OpenAI counts as OpenAI.
 */
export function maxTokensField(baseUrl: string): 'max_completion_tokens' | 'max_tokens' {
  let host = '';
  try {
    host = new URL(baseUrl).hostname.toLowerCase();
  } catch {
    return 'max_tokens';
  }
  return host === 'openai.com' || host.endsWith('.openai.com') || host.endsWith('.openai.azure.com') ? 'max_completion_tokens' : 'max_tokens';
}

function toOpenAiMessages(request: LlmRequest) {
  const out: Record<string, unknown>[] = [];
  // `system`, not `developer`: compatible servers only know `system`, and OpenAI maps it
  // to `developer` for the models that want that.
  if (request.system) out.push({ role: 'system', content: request.system });
  for (const m of request.messages as Message[]) {
    switch (m.role) {
      case 'user':
        out.push({ role: 'user', content: m.text });
        break;
      case 'assistant':
        out.push({
          role: 'assistant',
          // null beside tool calls, as the OpenAI SDK sends it; '' would be a text part.
          content: m.text === '' && m.toolCalls.length > 0 ? null : m.text,
          ...(m.toolCalls.length > 0 && {
            tool_calls: m.toolCalls.map((c) => ({
              id: c.id,
              type: 'function',
              // The parsed input, even when the model's text was invalid: some compatible
              // servers re-parse history arguments in their chat templates and fail on
              // garbage. The tool result already told the model what was wrong.
              function: { name: c.name, arguments: JSON.stringify(c.input) },
            })),
          }),
        });
        break;
      case 'tool':
        // Chat Completions has no error flag on a tool result; the content carries it.
        out.push({ role: 'tool', tool_call_id: m.toolCallId, content: m.content });
        break;
    }
  }
  return out;
}

export const streamOpenAi: ProviderStream = async (request, call) => {
  const url = joinUrl(call.baseUrl, '/chat/completions');
  const headers: Record<string, string> = {};
  // Ollama and most local servers take no key; an empty bearer only earns a 401 elsewhere.
  if (call.apiKey) headers.authorization = `Bearer ${call.apiKey}`;
  const { endpoint, events, progress } = await openEventStream(PROVIDER, call, url, headers, openAiRequestBody(request, call.baseUrl));

  const reply = new OpenAiReply(progress);
  let sawDone = false;

  try {
    for await (const ev of events) {
      if (ev.data.trim() === '[DONE]') {
        sawDone = true;
        break;
      }
      const frame = frameJson(PROVIDER, ev.data, endpoint);
      const chunk = openAiChunk.parse(frame);
      if (chunk == null) continue;
      if (chunk.error !== undefined && chunk.error !== null) throw classifyStreamError(PROVIDER, frame, endpoint);
      reply.take(chunk);
    }
  } catch (err) {
    // After `finish_reason` the answer is whole and only the usage chunk and `[DONE]` are
    // outstanding. Losing the connection now costs the token counts, while a retry would
    // cost a second, different answer. Keep the answer. An abort is still an abort.
    if (!(reply.finished && LlmError.is(err) && err.type === 'network_error' && !call.signal.aborted)) throw err;
  }
  // `finish_reason` counts as terminal on its own: some compatible servers never send
  // `[DONE]`. Usage arrives after it, so the loop above reads on to `[DONE]` or the end.
  if (!sawDone && !reply.finished) endedWithoutSentinel(PROVIDER, call, '[DONE] or a finish_reason', endpoint);

  const { toolCalls } = reply;
  requireCompleteToolCalls(PROVIDER, toolCalls, endpoint);
  return assistantMessage({ text: progress.text, toolCalls, stopReason: reply.stopReason, usage: reply.usage, responseModel: reply.responseModel });
};
