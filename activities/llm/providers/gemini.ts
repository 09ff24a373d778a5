import { randomBytes } from 'node:crypto';
import type { LlmRequest, Message, Reasoning, StopReason, ToolCall, Usage } from '../../../contracts/messages';
import { classifyStreamError } from '../classify';
import { forbidsToolCalls } from '../compaction-request';
import { LlmError } from '../llm-error';
import { assistantMessage, isPlainObject, modelName, tokenCount, toolInputFromValue } from './assistant-message';
import { endedWithoutSentinel, frameJson, joinUrl, openEventStream, ownEntry, requireCompleteToolCalls, wireString } from './event-stream';
import { GeminiPartRecorder, modelParts, type GeminiPart } from './gemini-parts';
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


const FINISH_REASONS: Record<string, StopReason> = {
  STOP: 'end_turn',
  MAX_TOKENS: 'max_tokens',
};

/**
 * Finish reasons that mean Google's filters stopped the answer, not the model. The turn
 * fails as `content_blocked`: the partial text is no answer, and the same request would
 * be stopped again.
 */
const BLOCKING_FINISH_REASONS = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

export const streamGemini: ProviderStream = async (request, call) => {
  const headers: Record<string, string> = {};
  if (call.apiKey) headers['x-goog-api-key'] = call.apiKey;
  const { endpoint, events, progress } = await openEventStream(PROVIDER, call, geminiUrl(call.baseUrl, request.model), headers, geminiRequestBody(request));

  /**
   * Gemini gives function calls no id, and the workflow pairs results to calls by id
   * across the WHOLE session, so `gemini_call_1` in every reply would collide on the
   * second turn. A random tag per reply makes them unique; the counter keeps them
   * ordered and readable within it. (A hash of the call would collide when the model
   * repeats a call verbatim, which models do.) Nothing replays this: the activity's
   * result is recorded in history, so the ids need not be reproducible.
   */
  const replyTag = randomBytes(6).toString('hex');
  const toolCalls: ToolCall[] = [];
  const parts = new GeminiPartRecorder();
  const usage: Required<Usage> = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
  let stopReason: StopReason = 'end_turn';
  let responseModel: string | undefined;
  let finished = false;

  try {
    for await (const ev of events) {
      const chunk = frameJson(PROVIDER, ev.data, endpoint);
      if (!isPlainObject(chunk)) continue;
      if (chunk.error !== undefined && chunk.error !== null) throw classifyStreamError(PROVIDER, chunk, endpoint);
      if (isPlainObject(chunk.usageMetadata)) readUsage(usage, chunk.usageMetadata);
      responseModel = modelName(chunk.modelVersion) ?? responseModel;
      const candidate = Array.isArray(chunk.candidates) ? chunk.candidates[0] : undefined;
      // A blocked PROMPT gets no candidate at all, only `promptFeedback.blockReason`.
      if (!isPlainObject(candidate)) {
        if (isPlainObject(chunk.promptFeedback) && typeof chunk.promptFeedback.blockReason === 'string') {
          throw contentBlocked(`the prompt was blocked (${chunk.promptFeedback.blockReason})`, endpoint);
        }
        continue;
      }
      const candidateParts = isPlainObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
      for (const part of candidateParts) {
        if (!isPlainObject(part)) continue;
        const signature = typeof part.thoughtSignature === 'string' && part.thoughtSignature !== '' ? part.thoughtSignature : undefined;
        const text = typeof part.text === 'string' ? part.text : '';
        if (isPlainObject(part.functionCall)) {
          parts.call(toolCalls.length, signature);
          toolCalls.push({
            id: `gemini_${replyTag}_${toolCalls.length + 1}`,
            name: wireString(part.functionCall.name),
            ...toolInputFromValue(part.functionCall.args),
          });
          progress.toolCallStarted();
        } else if (part.thought === true) {
          // A thought summary: shown apart, never part of the answer.
          parts.thought(text, signature);
          progress.appendThinking(text);
        } else {
          parts.text(text, signature);
          progress.appendText(text);
        }
      }
      if (typeof candidate.finishReason === 'string' && candidate.finishReason !== '') {
        if (BLOCKING_FINISH_REASONS.has(candidate.finishReason)) throw contentBlocked(`the answer was stopped (${candidate.finishReason})`, endpoint);
        finished = true;
        stopReason = ownEntry(FINISH_REASONS, candidate.finishReason) ?? 'other';
      }
    }
  } catch (err) {
    // As with OpenAI: after `finishReason` only the usage can still be missing. Keep the
    // answer rather than pay for a second, different one.
    if (!(finished && LlmError.is(err) && err.type === 'network_error' && !call.signal.aborted)) throw err;
  }
  if (!finished) endedWithoutSentinel(PROVIDER, call, 'a candidate with finishReason', endpoint);
  requireCompleteToolCalls(PROVIDER, toolCalls, endpoint);

  return assistantMessage({ text: progress.text, toolCalls, stopReason, usage, responseModel, ...(parts.needed ? { providerData: { provider: PROVIDER, parts: parts.refs } } : {}) });
};

function contentBlocked(detail: string, endpoint: string): LlmError {
  return new LlmError({ type: 'content_blocked', provider: PROVIDER, endpoint, detail });
}

/**
 * `usageMetadata` is cumulative, and early chunks may carry it without counts; a count
 * replaces the earlier one only when present. The prompt count includes the cached part;
 * thinking is billed as output and counted against `maxOutputTokens`, but reported apart
 * from `candidatesTokenCount`, so it is added to the output here.
 */
function readUsage(usage: Required<Usage>, meta: Record<string, unknown>): void {
  const has = (key: string) => meta[key] !== undefined && meta[key] !== null;
  if (has('promptTokenCount')) usage.inputTokens = tokenCount(meta.promptTokenCount);
  if (has('cachedContentTokenCount')) usage.cacheReadTokens = tokenCount(meta.cachedContentTokenCount);
  if (has('thoughtsTokenCount')) usage.reasoningTokens = tokenCount(meta.thoughtsTokenCount);
  if (has('candidatesTokenCount') || has('thoughtsTokenCount')) usage.outputTokens = tokenCount(meta.candidatesTokenCount) + usage.reasoningTokens;
}
