import type { LlmRequest, Message, Reasoning } from '../../../contracts/messages';
import { classifyStreamError } from '../classify';
import { forbidsToolCalls } from '../compaction-request';
import { LlmError } from '../llm-error';
import { assistantMessage } from './assistant-message';
import { endedWithoutSentinel, frameJson, joinUrl, openEventStream, requireCompleteToolCalls } from './event-stream';
import { geminiChunk, GeminiReply } from './gemini-chunks';
import { modelParts, type GeminiPart } from './gemini-parts';
import { stableTools } from './stable-tools';
import { mergeTurns, type Turn } from './turns';
import type { ProviderStream } from './types';

/**
 * Gemini API, streamed: `POST {baseUrl}/v1beta/models/{model}:streamGenerateContent?alt=sse`.
 * Terminal: a candidate carrying `finishReason`. A prompt blocked outright (no candidate,
 * `promptFeedback.blockReason`) or an answer stopped by the filters is `content_blocked`.
 *
 * The key travels in the `x-goog-api-key` header and NEVER in the `?key=` query
 * parameter Google also accepts: a URL ends up in error messages, proxy logs and traces,
 * a header does not.
 */

const PROVIDER = 'google' as const;

export function geminiUrl(baseUrl: string, model: string): string {
  // `models/x` and `x` both name the model; the path wants exactly one `models/`.
  const name = model.replace(/^models\//, '');
  return joinUrl(baseUrl, `/v1beta/models/${encodeURIComponent(name)}:streamGenerateContent?alt=sse`);
}

/**
 * Gemini caches a prompt's prefix implicitly, so the only thing caching asks of the body
 * is a prefix that stays the same: tools in a stable order, before the conversation.
 */
export function geminiRequestBody(request: LlmRequest) {
  return {
    ...(request.tools.length > 0
      ? {
          tools: [
            {
              // `parametersJsonSchema`, not `parameters`: the latter is Google's OpenAPI
              // subset and rejects what zod's JSON Schema output contains
              // (`additionalProperties`, `$ref`, `anyOf` with `const`...).
              functionDeclarations: stableTools(request.tools).map((t) => ({
                name: t.name,
                description: t.description,
                parametersJsonSchema: t.inputSchema,
              })),
            },
          ],
        }
      : {}),
    ...(request.system ? { systemInstruction: { parts: [{ text: request.system }] } } : {}),
    contents: toContents(request.messages),
    // A compaction's summary must be text: the function declarations stay, calling them does not.
    ...(request.tools.length > 0 && forbidsToolCalls(request) ? { toolConfig: { functionCallingConfig: { mode: 'NONE' } } } : {}),
    generationConfig: { maxOutputTokens: request.maxTokens, ...thinkingConfig(request.reasoning) },
  };
}

/**
 * A level is Gemini 3's `thinkingLevel`, a number the `thinkingBudget` of Gemini 2.5;
 * `includeThoughts` asks for the thought summaries that `watch` and `log` show.
 */
function thinkingConfig(reasoning: Reasoning | undefined) {
  if (reasoning === undefined || reasoning === 'off') return {};
  const level = typeof reasoning === 'number' ? { thinkingBudget: reasoning } : { thinkingLevel: reasoning };
  return { thinkingConfig: { ...level, includeThoughts: true } };
}

function toContents(messages: Message[]) {
  const turns: Turn<'user' | 'model', GeminiPart>[] = messages.map((m) => {
    switch (m.role) {
      case 'user':
        return { role: 'user', blocks: m.text ? [{ text: m.text }] : [] };
      case 'assistant':
        return { role: 'model', blocks: modelParts(m) };
      case 'tool':
        // Gemini's documented convention: `output` for a result, `error` for a failure.
        // It is the only place the result code reaches this model.
        return {
          role: 'user',
          blocks: [{ functionResponse: { name: m.name, response: m.code === 'ok' ? { output: m.content } : { error: m.content } } }],
        };
    }
  });
  return mergeTurns(turns, (p) => 'functionResponse' in p).map((t) => ({ role: t.role, parts: t.blocks }));
}

export const streamGemini: ProviderStream = async (request, call) => {
  const headers: Record<string, string> = {};
  if (call.apiKey) headers['x-goog-api-key'] = call.apiKey;
  const { endpoint, events, progress } = await openEventStream(PROVIDER, call, geminiUrl(call.baseUrl, request.model), headers, geminiRequestBody(request));

  const reply = new GeminiReply(progress, endpoint);
  try {
    for await (const ev of events) {
      const frame = frameJson(PROVIDER, ev.data, endpoint);
      const chunk = geminiChunk.parse(frame);
      if (chunk == null) continue;
      if (chunk.error !== undefined && chunk.error !== null) throw classifyStreamError(PROVIDER, frame, endpoint);
      reply.take(chunk);
    }
  } catch (err) {
    // As with OpenAI: after `finishReason` only the usage can still be missing. Keep the
    // answer rather than pay for a second, different one.
    if (!(reply.finished && LlmError.is(err) && err.type === 'network_error' && !call.signal.aborted)) throw err;
  }
  if (!reply.finished) endedWithoutSentinel(PROVIDER, call, 'a candidate with finishReason', endpoint);
  const { toolCalls, parts } = reply;
  requireCompleteToolCalls(PROVIDER, toolCalls, endpoint);

  return assistantMessage({
    text: progress.text,
    toolCalls,
    stopReason: reply.stopReason,
    usage: reply.usage,
    responseModel: reply.responseModel,
    ...(parts.needed ? { providerData: { provider: PROVIDER, parts: parts.refs } } : {}),
  });
};
