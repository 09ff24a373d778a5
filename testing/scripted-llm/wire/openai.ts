import { dataFrame, type Frame } from '../sse';
import type { Dialect, ErrorShape, StreamPlan } from './dialect';
import { finalUserText, messageCount } from './chat-messages';
import { randomId } from './random-id';
import { withoutToolCalls } from './tool-choice';

/** OpenAI Chat Completions, `POST /chat/completions` (or `/v1/chat/completions`) with `stream: true`. */

interface OpenAiError {
  message: string;
  type: string;
  code: string | null;
}

const BY_STATUS: Record<number, OpenAiError> = {
  400: { message: 'Invalid request', type: 'invalid_request_error', code: null },
  401: {
    message: 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
    type: 'invalid_request_error',
    code: 'invalid_api_key',
  },
  403: { message: 'You are not allowed to access this resource.', type: 'invalid_request_error', code: 'unsupported_country_region_territory' },
  404: { message: 'The model does not exist or you do not have access to it.', type: 'invalid_request_error', code: 'model_not_found' },
  429: {
    message: 'Rate limit reached for requests. Please try again later.',
    type: 'requests',
    code: 'rate_limit_exceeded',
  },
  500: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', code: null },
  503: { message: 'The engine is currently overloaded, please try again later', type: 'server_error', code: null },
};

/** A known `code` brings the message and type the real API sends with it. */
const BY_CODE: Record<string, Omit<OpenAiError, 'code'>> = {
  context_length_exceeded: {
    message:
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.",
    type: 'invalid_request_error',
  },
  insufficient_quota: {
    message: 'You exceeded your current quota, please check your plan and billing details.',
    type: 'insufficient_quota',
  },
  rate_limit_exceeded: { message: 'Rate limit reached for requests. Please try again later.', type: 'requests' },
  invalid_api_key: { message: 'Incorrect API key provided.', type: 'invalid_request_error' },
  model_not_found: { message: 'The model does not exist or you do not have access to it.', type: 'invalid_request_error' },
};

function errorObject(base: OpenAiError, shape: ErrorShape): Record<string, unknown> {
  const known = shape.code === undefined ? undefined : BY_CODE[shape.code];
  return {
    message: shape.message ?? known?.message ?? base.message,
    type: shape.errorType ?? known?.type ?? base.type,
    param: null,
    code: shape.code ?? base.code,
  };
}

const FINISH_REASONS = { end_turn: 'stop', tool_use: 'tool_calls', max_tokens: 'length', stop_sequence: 'stop' } as const;

function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = (content as Array<Record<string, unknown>>)
    .filter((part) => part?.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text as string);
  return texts.length > 0 ? texts.join('\n') : undefined;
}

export const openai: Dialect = {
  provider: 'openai',
  eol: '\n',

  match(method, url) {
    return method === 'POST' && (url.pathname === '/chat/completions' || url.pathname === '/v1/chat/completions') ? {} : null;
  },

  problem(body) {
    if (body.stream !== true) return 'the scripted LLM serves streaming requests only: set "stream": true';
    if (!Array.isArray(body.messages)) return "Missing required parameter: 'messages'.";
    if (body.tool_choice !== undefined && !Array.isArray(body.tools)) return "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.";
    return null;
  },

  modelFromBody(body) {
    return typeof body.model === 'string' ? body.model : undefined;
  },

  lastUserText(body) {
    const messages = Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : [];
    for (const message of [...messages].reverse()) {
      if (message?.role !== 'user') continue;
      const text = textOf(message.content);
      if (text !== undefined) return text;
    }
    return '';
  },

  finalUserText,

  messageCount,

  contextOverflow(tokens, window) {
    return {
      status: 400,
      code: 'context_length_exceeded',
      message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
    };
  },

  unpaired(fault) {
    const message =
      fault.kind === 'result_without_call'
        ? "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
        : "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
          `The following tool_call_ids did not have response messages: ${fault.ids.join(', ')}`;
    return { status: 400, body: { error: { message, type: 'invalid_request_error', param: `messages.[${fault.at}].role`, code: null } } };
  },

  requestedOutput(body) {
    const format = body.response_format as { type?: unknown; json_schema?: { schema?: unknown; strict?: unknown } } | undefined;
    if (format?.type !== 'json_schema') return undefined;
    return { mode: 'json_schema', schema: format.json_schema?.schema, strict: format.json_schema?.strict === true };
  },

  streamHeaders() {
    return {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-request-id': randomId('req_'),
    };
  },

  frames(scripted: StreamPlan, body) {
    const plan = body.tool_choice === 'none' ? withoutToolCalls(scripted) : scripted;
    const options = body.stream_options as Record<string, unknown> | undefined;
    const includeUsage = options?.include_usage === true;
    const id = randomId('chatcmpl-');
    const created = Math.floor(Date.now() / 1000);
    // With include_usage every chunk carries `usage: null` until the usage chunk.
    const chunk = (choices: unknown[], usage: unknown = null) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model: plan.answeredBy,
      system_fingerprint: 'fp_scripted',
      choices,
      ...(includeUsage ? { usage } : {}),
    });
    const choice = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
      index: 0,
      delta,
      logprobs: null,
      finish_reason: finishReason,
    });

    const hasText = plan.textPieces.length > 0;
    const frames: Frame[] = [
      // A reply that is only tool calls opens with `content: null`, as the real API does.
      dataFrame(chunk([choice({ role: 'assistant', content: hasText || plan.calls.length === 0 ? '' : null, refusal: null })])),
      // A refusal streams in its own field, never as content.
      ...plan.textPieces.map((piece) => dataFrame(chunk([choice(plan.refusal ? { refusal: piece } : { content: piece })]), { content: true })),
    ];
    plan.calls.forEach((call, index) => {
      frames.push(
        dataFrame(
          chunk([
            choice({
              tool_calls: [{ index, id: call.id ?? randomId('call_'), type: 'function', function: { name: call.name, arguments: '' } }],
            }),
          ]),
        ),
        ...call.argPieces.map((args) =>
          dataFrame(chunk([choice({ tool_calls: [{ index, function: { arguments: args } }] })]), { content: true }),
        ),
      );
    });

    if (!plan.complete) return frames;
    frames.push(dataFrame(chunk([choice({}, FINISH_REASONS[plan.stopReason])])));
    if (includeUsage) {
      const { inputTokens, outputTokens, cacheReadTokens = 0, reasoningTokens = 0 } = plan.usage;
      frames.push(
        dataFrame(
          chunk([], {
            prompt_tokens: inputTokens,
            completion_tokens: outputTokens,
            total_tokens: inputTokens + outputTokens,
            prompt_tokens_details: { cached_tokens: cacheReadTokens, audio_tokens: 0 },
            completion_tokens_details: { reasoning_tokens: reasoningTokens, audio_tokens: 0 },
          }),
        ),
      );
    }
    frames.push({ data: '[DONE]' });
    return frames;
  },

  streamError(shape: ErrorShape) {
    return dataFrame({ error: errorObject(BY_STATUS[500]!, shape) });
  },

  malformed() {
    return { data: '{"id":"chatcmpl-scripted","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"cont' };
  },

  ping() {
    return { comment: 'keep-alive' };
  },

  errorBody(status: number, shape: ErrorShape) {
    const base: OpenAiError = BY_STATUS[status] ?? {
      message: status >= 500 ? 'The server had an error while processing your request.' : 'Invalid request',
      type: status >= 500 ? 'server_error' : 'invalid_request_error',
      code: null,
    };
    return { error: errorObject(base, shape) };
  },
};
