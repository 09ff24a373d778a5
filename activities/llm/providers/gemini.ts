import type { LlmRequest, Message, Reasoning } from '../../../contracts/messages';
import type { OutputSpec } from '../../../contracts/structured-output';
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
  const output = request.output === undefined ? undefined : outputMode(request, request.output);
  const system = [request.system, output?.instruction].filter(Boolean).join('\n\n');
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
    ...(system ? { systemInstruction: { parts: [{ text: system }] } } : {}),
    contents: toContents(request.messages),
    // A compaction's summary must be text: the function declarations stay, calling them does not.
    ...(request.tools.length > 0 && forbidsToolCalls(request) ? { toolConfig: { functionCallingConfig: { mode: 'NONE' } } } : {}),
    generationConfig: { maxOutputTokens: request.maxTokens, ...thinkingConfig(request.reasoning), ...output?.config },
  };
}

/**
 * Structured output, natively: a JSON answer (`responseMimeType`) of the schema, sent as
 * `responseJsonSchema` (JSON Schema, as the tools' `parametersJsonSchema`), not as
 * `responseSchema` (Google's OpenAPI subset, which refuses `additionalProperties`, type
 * lists and the rest of what zod writes). Gemini before 3 refuses a JSON answer beside
 * function declarations (400 "Function calling with a response mime type:
 * 'application/json' is unsupported"): there a step with tools is asked for the JSON in
 * the system instruction instead, and the workflow validates the answer as always.
 */
function outputMode(request: LlmRequest, output: OutputSpec): { config?: Record<string, unknown>; instruction?: string } {
  if (request.tools.length > 0 && refusesJsonWithTools(request.model)) {
    return { instruction: `When you give your final answer, answer with only a JSON value that matches this JSON Schema: ${JSON.stringify(output.schema)}` };
  }
  return { config: { responseMimeType: 'application/json', responseJsonSchema: output.schema } };
}

/** Gemini 1.x and 2.x; any other name (Gemini 3 and later, a tuned model's own name) is taken to accept both. */
function refusesJsonWithTools(model: string): boolean {
  return /^gemini-[12][.-]/.test(model.replace(/^models\//, ''));
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
