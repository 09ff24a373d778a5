import { dataFrame, type Frame } from '../sse';
import type { Dialect, ErrorShape, StreamPlan } from './dialect';
import { randomId } from './random-id';
import { functionCallContent, sign, verify } from './signatures';
import { withoutToolCalls } from './tool-choice';

/** Gemini, `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`. */

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const CODES_BY_NAME: Record<string, number> = Object.fromEntries(
  Object.entries(STATUS_NAMES).map(([code, name]) => [name, Number(code)]),
);

const MESSAGES: Record<string, string> = {
  INVALID_ARGUMENT: 'Request contains an invalid argument.',
  UNAUTHENTICATED: 'API key not valid. Please pass a valid API key.',
  PERMISSION_DENIED: 'Permission denied.',
  NOT_FOUND: 'models/unknown is not found for API version v1beta.',
  RESOURCE_EXHAUSTED: 'Resource has been exhausted (e.g. check quota).',
  INTERNAL: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  UNAVAILABLE: 'The model is overloaded. Please try again later.',
  DEADLINE_EXCEEDED: 'The request timed out. Please try again.',
};

function statusNameFor(status: number): string {
  return STATUS_NAMES[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT');
}

function errorObject(code: number, statusName: string, message: string | undefined) {
  return { code, message: message ?? MESSAGES[statusName] ?? statusName, status: statusName };
}

const FINISH_REASONS = { end_turn: 'STOP', tool_use: 'STOP', max_tokens: 'MAX_TOKENS', stop_sequence: 'STOP' } as const;

const PATH = /^\/(v1|v1beta)\/models\/([^/:]+(?:\/[^/:]+)*):([A-Za-z]+)$/;

/** Gemini 3 models sign their reasoning and require the signatures back. */
function signsReasoning(model: string): boolean {
  return model.replace(/^models\//, '').startsWith('gemini-3');
}

function includesThoughts(body: Record<string, unknown>): boolean {
  const config = body.generationConfig as { thinkingConfig?: { includeThoughts?: unknown } } | undefined;
  return config?.thinkingConfig?.includeThoughts === true;
}

/** `toolConfig.functionCallingConfig.mode`: `NONE` forbids function calls for the request. */
function callingMode(body: Record<string, unknown>): unknown {
  const config = body.toolConfig as { functionCallingConfig?: { mode?: unknown } } | undefined;
  return config?.functionCallingConfig?.mode;
}

type Content = { role?: unknown; parts?: unknown };
type Part = { text?: unknown; functionCall?: { name?: unknown; args?: unknown }; functionResponse?: unknown; thoughtSignature?: unknown };

/**
 * Gemini 3 checks the function calls of the current turn (the model contents after the
 * last user message that is not only function responses): the first call of each step
 * must come back with the `thoughtSignature` it was sent with. The wording of a missing
 * signature is the real API's; a signature that is not the one sent is refused too.
 */
function signatureProblem(contents: unknown[]): string | null {
  const partsOf = (c: Content): Part[] => (Array.isArray(c?.parts) ? (c.parts as Part[]) : []);
  let turnStart = 0;
  contents.forEach((c, i) => {
    const content = c as Content;
    if (content?.role !== 'model' && partsOf(content).some((p) => typeof p?.text === 'string')) turnStart = i + 1;
  });
  for (let i = turnStart; i < contents.length; i++) {
    const content = contents[i] as Content;
    if (content?.role !== 'model') continue;
    const call = partsOf(content).find((p) => typeof p?.functionCall === 'object' && p.functionCall !== null);
    if (!call?.functionCall) continue;
    const { name, args } = call.functionCall;
    if (call.thoughtSignature === undefined) {
      return (
        'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, ' +
        'and missing thought_signature may lead to degraded model performance. Additional data, function call ' +
        `\`default_api:${String(name)}\` , position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`
      );
    }
    if (!verify('functionCall', functionCallContent(name, args), call.thoughtSignature)) return 'Corrupted thought signature.';
  }
  return null;
}

export const google: Dialect = {
  provider: 'google',
  eol: '\r\n',

  match(method, url) {
    if (method !== 'POST') return null;
    const match = PATH.exec(url.pathname);
    if (!match) return null;
    return { model: decodeURIComponent(match[2]!) };
  },

  problem(body, url) {
    const method = PATH.exec(url.pathname)?.[3];
    if (method !== 'streamGenerateContent') {
      return `the scripted LLM serves streamGenerateContent only, not ${method ?? 'this method'}`;
    }
    // Without alt=sse Gemini streams one JSON array instead of events; an SSE reader would hang on it.
    if (url.searchParams.get('alt') !== 'sse') return 'the scripted LLM serves alt=sse streams only: add ?alt=sse';
    if (!Array.isArray(body.contents)) return '* GenerateContentRequest.contents: contents is not specified';
    const model = decodeURIComponent(PATH.exec(url.pathname)?.[2] ?? '');
    // As Gemini 1 and 2 do (Gemini 3 takes both): a JSON answer beside function declarations is refused.
    if (google.requestedOutput(body) !== undefined && Array.isArray(body.tools) && /^gemini-[12][.-]/.test(model.replace(/^models\//, ''))) {
      return "Function calling with a response mime type: 'application/json' is unsupported";
    }
    return signsReasoning(model) ? signatureProblem(body.contents as unknown[]) : null;
  },

  requestedOutput(body) {
    const config = body.generationConfig as { responseMimeType?: unknown; responseJsonSchema?: unknown; responseSchema?: unknown } | undefined;
    if (config?.responseMimeType !== 'application/json') return undefined;
    return { mode: 'response_schema', schema: config.responseJsonSchema ?? config.responseSchema };
  },

  modelFromBody() {
    return undefined;
  },

  lastUserText(body) {
    const contents = Array.isArray(body.contents) ? (body.contents as Array<Record<string, unknown>>) : [];
    for (const content of [...contents].reverse()) {
      // `role` may be omitted for a single-turn request, and then it means the user.
      if (content?.role !== undefined && content.role !== 'user') continue;
      const parts = Array.isArray(content.parts) ? (content.parts as Array<Record<string, unknown>>) : [];
      const texts = parts.filter((part) => typeof part?.text === 'string').map((part) => part.text as string);
      if (texts.length > 0) return texts.join('\n');
    }
    return '';
  },

  finalUserText(body) {
    const contents = Array.isArray(body.contents) ? (body.contents as Array<Record<string, unknown>>) : [];
    const last = contents[contents.length - 1];
    if (last === undefined || (last.role !== undefined && last.role !== 'user')) return undefined;
    const parts = Array.isArray(last.parts) ? (last.parts as Array<Record<string, unknown>>).filter((p) => typeof p?.text === 'string') : [];
    return parts[parts.length - 1]?.text as string | undefined;
  },

  messageCount(body) {
    return Array.isArray(body.contents) ? body.contents.length : 0;
  },

  contextOverflow(tokens, window) {
    return { status: 400, errorType: 'INVALID_ARGUMENT', message: `The input token count (${tokens}) exceeds the maximum number of tokens allowed (${window}).` };
  },

  unpaired(fault) {
    const message =
      fault.kind === 'result_without_call' && !fault.callsBefore
        ? 'Please ensure that function response turn comes immediately after a function call turn.'
        : 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
    return { status: 400, body: google.errorBody(400, { errorType: 'INVALID_ARGUMENT', message }) };
  },

  streamHeaders() {
    return { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
  },

  frames(scripted: StreamPlan, body: Record<string, unknown>) {
    const plan = callingMode(body) === 'NONE' ? withoutToolCalls(scripted) : scripted;
    const responseId = randomId('', 22);
    const signed = signsReasoning(plan.model);
    const parts: Array<Record<string, unknown>> = [
      ...(includesThoughts(body) ? [{ text: plan.thinking, thought: true }] : []),
      ...plan.textPieces.map((text) => ({ text })),
      // Gemini sends a call's arguments whole, as an object in one part; it has no argument
      // deltas. Gemini 3 signs the first call of a step only, parallel calls after it bare.
      ...plan.calls.map((call, i) => ({
        functionCall: { name: call.name, args: call.args },
        ...(signed && i === 0 ? { thoughtSignature: sign('functionCall', functionCallContent(call.name, call.args)) } : {}),
      })),
      // Without a call, Gemini 3 closes a reply with an empty text part that carries the signature.
      ...(signed && plan.calls.length === 0 ? [{ text: '', thoughtSignature: sign('thinking', responseId) }] : []),
    ];
    const { inputTokens, cacheReadTokens = 0, reasoningTokens = 0 } = plan.usage;
    // Gemini reports thinking beside the candidates, not inside them.
    const outputTokens = plan.usage.outputTokens - reasoningTokens;
    // usageMetadata is cumulative: each chunk reports the candidate tokens so far.
    const chunk = (part: Record<string, unknown> | undefined, done: number, finishReason?: string): Frame => {
      const candidatesTokenCount = parts.length === 0 ? outputTokens : Math.round((outputTokens * done) / parts.length);
      return dataFrame(
        {
          candidates: [
            {
              // A complete reply with nothing in it really arrives as content without parts.
              content: part === undefined ? { role: 'model' } : { parts: [part], role: 'model' },
              ...(finishReason === undefined ? {} : { finishReason }),
              index: 0,
            },
          ],
          usageMetadata: {
            promptTokenCount: inputTokens,
            candidatesTokenCount,
            totalTokenCount: inputTokens + candidatesTokenCount + reasoningTokens,
            ...(cacheReadTokens > 0 ? { cachedContentTokenCount: cacheReadTokens } : {}),
            ...(reasoningTokens > 0 ? { thoughtsTokenCount: reasoningTokens } : {}),
          },
          modelVersion: plan.answeredBy,
          responseId,
        },
        { content: part !== undefined },
      );
    };

    // A blocked prompt gets no candidate at all: one chunk with the reason and the prompt's count.
    if (plan.refusal) {
      const { inputTokens } = plan.usage;
      const blocked = { promptFeedback: { blockReason: plan.refusal.blockReason }, usageMetadata: { promptTokenCount: inputTokens, totalTokenCount: inputTokens }, modelVersion: plan.answeredBy, responseId };
      return [dataFrame(blocked, { content: true })];
    }
    const finishReason = FINISH_REASONS[plan.stopReason];
    if (parts.length === 0) return plan.complete ? [chunk(undefined, 0, finishReason)] : [];
    // The finish reason rides on the last content chunk, not on a frame of its own.
    return parts.map((part, i) => {
      const last = i === parts.length - 1;
      return chunk(part, i + 1, plan.complete && last ? finishReason : undefined);
    });
  },

  streamError(shape: ErrorShape) {
    const statusName = shape.errorType ?? 'UNAVAILABLE';
    return dataFrame({ error: errorObject(CODES_BY_NAME[statusName] ?? 500, statusName, shape.message) });
  },

  malformed() {
    return { data: '{"candidates": [{"content": {"parts": [{"text": "' };
  },

  // Gemini sends no keep-alive frames; an SSE comment is what a proxy in front of it would add.
  ping() {
    return { comment: 'keep-alive' };
  },

  errorBody(status: number, shape: ErrorShape) {
    return { error: errorObject(status, shape.errorType ?? statusNameFor(status), shape.message) };
  },
};
