import { randomBytes } from 'node:crypto';
import type { LlmRequest, Message, StopReason, ToolCall, Usage } from '../../../workflows/messages';
import { classifyStreamError } from '../classify';
import { LlmError } from '../llm-error';
import { assistantMessage, isPlainObject, tokenCount, toolInputFromValue } from './assistant-message';
import { endedWithoutSentinel, frameJson, joinUrl, openEventStream } from './event-stream';
import { mergeTurns, type Turn } from './turns';
import type { ProviderStream } from './types';

/**
 * Gemini API, streamed: `POST {baseUrl}/v1beta/models/{model}:streamGenerateContent?alt=sse`.
 * Terminal: a candidate carrying `finishReason` (or a prompt blocked outright).
 *
 * The key travels in the `x-goog-api-key` header and NEVER in the `?key=` query
 * parameter Google also accepts: a URL ends up in error messages, proxy logs and traces,
 * a header does not.
 */

const PROVIDER = 'google';

type Part =
  | { text: string }
  | { functionCall: { name: string; args: Record<string, unknown> } }
  | { functionResponse: { name: string; response: Record<string, unknown> } };

export function geminiUrl(baseUrl: string, model: string): string {
  // `models/x` and `x` both name the model; the path wants exactly one `models/`.
  const name = model.replace(/^models\//, '');
  return joinUrl(baseUrl, `/v1beta/models/${encodeURIComponent(name)}:streamGenerateContent?alt=sse`);
}

export function geminiRequestBody(request: LlmRequest) {
  return {
    contents: toContents(request.messages),
    ...(request.system ? { systemInstruction: { parts: [{ text: request.system }] } } : {}),
    ...(request.tools.length > 0
      ? {
          tools: [
            {
              // `parametersJsonSchema`, not `parameters`: the latter is Google's OpenAPI
              // subset and rejects what zod's JSON Schema output contains
              // (`additionalProperties`, `$ref`, `anyOf` with `const`...).
              functionDeclarations: request.tools.map((t) => ({
                name: t.name,
                description: t.description,
                parametersJsonSchema: t.inputSchema,
              })),
            },
          ],
        }
      : {}),
    generationConfig: { maxOutputTokens: request.maxTokens },
  };
}

function toContents(messages: Message[]) {
  const turns: Turn<'user' | 'model', Part>[] = messages.map((m) => {
    switch (m.role) {
      case 'user':
        return { role: 'user', blocks: m.text ? [{ text: m.text }] : [] };
      case 'assistant':
        return {
          role: 'model',
          blocks: [...(m.text ? [{ text: m.text }] : []), ...m.toolCalls.map((c) => ({ functionCall: { name: c.name, args: c.input } }))],
        };
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
  SAFETY: 'refusal',
  RECITATION: 'refusal',
  BLOCKLIST: 'refusal',
  PROHIBITED_CONTENT: 'refusal',
  SPII: 'refusal',
  IMAGE_SAFETY: 'refusal',
};

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
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  let stopReason: StopReason = 'end_turn';
  let finished = false;

  try {
    for await (const ev of events) {
      const chunk = frameJson(PROVIDER, ev.data, endpoint);
      if (!isPlainObject(chunk)) continue;
      if (chunk.error !== undefined && chunk.error !== null) throw classifyStreamError(PROVIDER, chunk, endpoint);
      if (isPlainObject(chunk.usageMetadata)) {
        usage.inputTokens = tokenCount(chunk.usageMetadata.promptTokenCount);
        // Thinking tokens are output: billed as such and counted against maxOutputTokens.
        usage.outputTokens = tokenCount(chunk.usageMetadata.candidatesTokenCount) + tokenCount(chunk.usageMetadata.thoughtsTokenCount);
      }
      const candidate = Array.isArray(chunk.candidates) ? chunk.candidates[0] : undefined;
      // A blocked PROMPT gets no candidate at all, only `promptFeedback.blockReason`. It is
      // a complete answer (a refusal), not a truncated stream: retrying asks again for a no.
      if (!isPlainObject(candidate)) {
        if (isPlainObject(chunk.promptFeedback) && typeof chunk.promptFeedback.blockReason === 'string') {
          finished = true;
          stopReason = 'refusal';
        }
        continue;
      }
      const parts = isPlainObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
      for (const part of parts) {
        if (!isPlainObject(part)) continue;
        // Thought summaries are not the answer.
        if (part.thought === true) continue;
        if (typeof part.text === 'string') progress.appendText(part.text);
        if (isPlainObject(part.functionCall)) {
          toolCalls.push({
            id: `gemini_${replyTag}_${toolCalls.length + 1}`,
            name: String(part.functionCall.name ?? ''),
            ...toolInputFromValue(part.functionCall.args),
          });
          progress.toolCallStarted();
        }
      }
      if (typeof candidate.finishReason === 'string' && candidate.finishReason !== '') {
        finished = true;
        stopReason = FINISH_REASONS[candidate.finishReason] ?? 'other';
      }
    }
  } catch (err) {
    // As with OpenAI: after `finishReason` only the usage can still be missing. Keep the
    // answer rather than pay for a second, different one.
    if (!(finished && LlmError.is(err) && err.type === 'network_error' && !call.signal.aborted)) throw err;
  }
  if (!finished) endedWithoutSentinel(PROVIDER, call, 'a candidate with finishReason', endpoint);

  return assistantMessage({ text: progress.text, toolCalls, stopReason, usage });
};
