import { dataFrame, type Frame } from '../sse';
import type { Dialect, ErrorShape, StreamPlan } from './dialect';
import { finalUserText, messageCount } from './chat-messages';
import { randomId } from './random-id';
import { sign, verify } from './signatures';
import { anthropicAnswerTool, asAnswerCall } from './structured-output';
import { withoutToolCalls } from './tool-choice';

/** Anthropic Messages, `POST /v1/messages` with `stream: true`. */

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

const MESSAGES: Record<string, string> = {
  invalid_request_error: 'Invalid request',
  authentication_error: 'invalid x-api-key',
  billing_error: 'Your credit balance is too low to access the Anthropic API.',
  permission_error: 'Your API key does not have permission to use the specified resource.',
  not_found_error: 'Not found',
  request_too_large: 'Request exceeds the maximum allowed number of bytes.',
  rate_limit_error:
    'This request would exceed the rate limit for your organization of 50 requests per minute. Please try again later.',
  api_error: 'Internal server error',
  timeout_error: 'Request timed out',
  overloaded_error: 'Overloaded',
};

function errorTypeFor(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

function errorObject(type: string, message: string | undefined): { type: string; message: string } {
  return { type, message: message ?? MESSAGES[type] ?? type };
}

function event(type: string, payload: Record<string, unknown>, content = false): Frame {
  return dataFrame({ type, ...payload }, { event: type, content });
}

/** Anthropic counts cache reads and writes beside `input_tokens`, not inside it. */
function inputUsage(plan: StreamPlan) {
  const { inputTokens, cacheReadTokens = 0, cacheWriteTokens = 0 } = plan.usage;
  return {
    input_tokens: Math.max(0, inputTokens - cacheReadTokens - cacheWriteTokens),
    cache_creation_input_tokens: cacheWriteTokens,
    cache_read_input_tokens: cacheReadTokens,
  };
}

function thinkingEnabled(body: Record<string, unknown>): boolean {
  const thinking = body.thinking as { type?: unknown } | undefined;
  return typeof thinking === 'object' && thinking !== null && thinking.type === 'enabled';
}

type Block = { type?: unknown; thinking?: unknown; signature?: unknown };
type MessageParam = { role?: unknown; content?: unknown };

/**
 * What the real API refuses when extended thinking is on, in its words: a tool choice that
 * forces a tool (`any`, or one by name), a budget that leaves no room for the answer, a thinking block whose signature does not match its
 * thinking (altered, or not from the model), and a tool-use turn sent back without the
 * thinking block it started with.
 */
function thinkingProblem(body: Record<string, unknown>, messages: unknown[]): string | null {
  const choice = (body.tool_choice as { type?: unknown } | undefined)?.type;
  if (choice === 'any' || choice === 'tool') return 'Thinking may not be enabled when tool_choice forces tool use.';
  const budget = (body.thinking as { budget_tokens?: unknown }).budget_tokens;
  if (typeof budget !== 'number' || budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  if (typeof body.max_tokens === 'number' && body.max_tokens <= budget) {
    return '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
  }
  const blocksOf = (m: MessageParam): Block[] => (Array.isArray(m.content) ? (m.content as Block[]) : []);
  for (const [i, message] of (messages as MessageParam[]).entries()) {
    for (const [j, block] of blocksOf(message).entries()) {
      if (block?.type === 'thinking' && !(typeof block.thinking === 'string' && verify('thinking', block.thinking, block.signature))) {
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      }
    }
  }
  let lastAssistant = messages.length - 1;
  while (lastAssistant >= 0 && (messages[lastAssistant] as MessageParam)?.role !== 'assistant') lastAssistant--;
  const blocks = lastAssistant >= 0 ? blocksOf((messages as MessageParam[])[lastAssistant]!) : [];
  const first = blocks[0]?.type;
  if (blocks.some((b) => b?.type === 'tool_use') && first !== 'thinking' && first !== 'redacted_thinking') {
    return (
      `messages.${lastAssistant}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first)}\`. ` +
      'When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). ' +
      'We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. ' +
      'Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking'
    );
  }
  return null;
}

export const anthropic: Dialect = {
  provider: 'anthropic',
  eol: '\n',

  match(method, url) {
    return method === 'POST' && url.pathname === '/v1/messages' ? {} : null;
  },

  problem(body) {
    if (body.stream !== true) return 'the scripted LLM serves streaming requests only: set "stream": true';
    if (!Array.isArray(body.messages)) return 'messages: Field required';
    return thinkingEnabled(body) ? thinkingProblem(body, body.messages as unknown[]) : null;
  },

  modelFromBody(body) {
    return typeof body.model === 'string' ? body.model : undefined;
  },

  lastUserText(body) {
    const messages = Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : [];
    for (const message of [...messages].reverse()) {
      if (message?.role !== 'user') continue;
      const { content } = message;
      if (typeof content === 'string') return content;
      if (!Array.isArray(content)) continue;
      const texts = (content as Array<Record<string, unknown>>)
        .filter((block) => block?.type === 'text' && typeof block.text === 'string')
        .map((block) => block.text as string);
      // A user turn holding only tool results is not something the user said.
      if (texts.length > 0) return texts.join('\n');
    }
    return '';
  },

  finalUserText,

  messageCount,

  contextOverflow(tokens, window) {
    return { status: 400, errorType: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > ${window} maximum` };
  },

  unpaired(fault) {
    const message =
      fault.kind === 'result_without_call'
        ? `messages.${fault.at}.content.${fault.part}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${fault.ids.join(', ')}. ` +
          'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.'
        : `messages.${fault.at}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${fault.ids.join(', ')}. ` +
          'Each `tool_use` block must have a corresponding `tool_result` block in the next message.';
    return { status: 400, body: anthropic.errorBody(400, { errorType: 'invalid_request_error', message }) };
  },

  streamHeaders() {
    return {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'request-id': randomId('req_'),
    };
  },

  requestedOutput: anthropicAnswerTool,

  frames(planned: StreamPlan, body: Record<string, unknown>) {
    // A structured answer is the answer tool's call where the request offers the tool.
    const scripted = planned.json && anthropicAnswerTool(body) !== undefined ? asAnswerCall(planned) : planned;
    const plan = (body.tool_choice as { type?: unknown } | undefined)?.type === 'none' ? withoutToolCalls(scripted) : scripted;
    const frames: Frame[] = [
      event('message_start', {
        message: {
          id: randomId('msg_'),
          type: 'message',
          role: 'assistant',
          model: plan.answeredBy,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...inputUsage(plan), output_tokens: 1 },
        },
      }),
    ];

    // Blocks are built first and closed afterwards, so a truncated stream can leave the last one open.
    const blocks: Frame[][] = [];
    if (thinkingEnabled(body)) {
      // As the real API streams it: an empty block, the thinking in deltas, then its signature.
      blocks.push([
        event('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
        event('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: plan.thinking } }, true),
        event('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: sign('thinking', plan.thinking) } }),
      ]);
    }
    if (plan.textPieces.length > 0) {
      const index = blocks.length;
      blocks.push([
        event('content_block_start', { index, content_block: { type: 'text', text: '' } }),
        ...plan.textPieces.map((text) =>
          event('content_block_delta', { index, delta: { type: 'text_delta', text } }, true),
        ),
      ]);
    }
    for (const call of plan.calls) {
      const index = blocks.length;
      blocks.push([
        event('content_block_start', {
          index,
          content_block: { type: 'tool_use', id: call.id ?? randomId('toolu_01', 22), name: call.name, input: {} },
        }),
        // The real API opens every tool block with an empty partial_json.
        event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } }),
        ...call.argPieces.map((partial_json) =>
          event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }, true),
        ),
      ]);
    }

    blocks.forEach((block, index) => {
      const [start, ...deltas] = block;
      if (start) frames.push(start);
      // Real streams send their first ping right after the first block opens.
      if (index === 0) frames.push(anthropic.ping());
      // One by one: a spread of a long text's deltas (200 000 for 1.6 MB at 8 characters each) overflows the call stack.
      for (const delta of deltas) frames.push(delta);
      const last = index === blocks.length - 1;
      if (plan.complete || !last) frames.push(event('content_block_stop', { index }));
    });

    if (!plan.complete) return frames;
    frames.push(
      event('message_delta', {
        delta: { stop_reason: plan.refusal ? 'refusal' : plan.stopReason, stop_sequence: null },
        // Cumulative, and repeating the input side, as the current API does.
        usage: {
          ...inputUsage(plan),
          output_tokens: plan.usage.outputTokens,
          ...(plan.usage.reasoningTokens ? { output_tokens_details: { thinking_tokens: plan.usage.reasoningTokens } } : {}),
        },
      }),
      event('message_stop', {}),
    );
    return frames;
  },

  streamError(shape: ErrorShape) {
    const error = errorObject(shape.errorType ?? 'overloaded_error', shape.message);
    return event('error', { error });
  },

  malformed() {
    return { event: 'content_block_delta', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_de' };
  },

  ping() {
    return event('ping', {});
  },

  errorBody(status: number, shape: ErrorShape) {
    return {
      type: 'error',
      error: errorObject(shape.errorType ?? errorTypeFor(status), shape.message),
      request_id: randomId('req_'),
    };
  },
};
