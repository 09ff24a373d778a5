import { describe, expect, it } from 'vitest';
import { anthropicRequestBody } from '../activities/llm/providers/anthropic';
import { geminiRequestBody, geminiUrl } from '../activities/llm/providers/gemini';
import { maxTokensField, openAiRequestBody } from '../activities/llm/providers/openai';
import type { LlmRequest, Message } from '../contracts/messages';

/** One session's conversation: text, a two-tool turn, both results (one failed), more text. */
const conversation: Message[] = [
  { role: 'user', text: 'What is in notes.md, and what is 6*7?' },
  {
    role: 'assistant',
    text: 'Let me check.',
    toolCalls: [
      { id: 'call_1', name: 'read_file', input: { path: 'notes.md' } },
      { id: 'call_2', name: 'calculator', input: { expression: '6*7' } },
    ],
  },
  { role: 'tool', toolCallId: 'call_1', name: 'read_file', code: 'error', content: 'ENOENT: notes.md does not exist' },
  { role: 'tool', toolCallId: 'call_2', name: 'calculator', code: 'ok', content: '42' },
  { role: 'assistant', text: 'notes.md is missing; 6*7 is 42.', toolCalls: [] },
  { role: 'user', text: 'Thanks.' },
];

const request: LlmRequest = {
  model: 'm',
  system: 'You are terse.',
  messages: conversation,
  tools: [
    {
      name: 'read_file',
      description: 'Read a file.',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } }, additionalProperties: false },
    },
  ],
  maxTokens: 1024,
};

describe('Anthropic request body', () => {
  const body = anthropicRequestBody(request);

  it('carries model, max_tokens, system, tools and stream: true', () => {
    expect(body).toMatchObject({ model: 'm', max_tokens: 1024, system: 'You are terse.', stream: true });
    expect(body.tools).toEqual([{ name: 'read_file', description: 'Read a file.', input_schema: request.tools[0]!.inputSchema }]);
  });

  it('maps assistant turns to text plus tool_use blocks, and merges consecutive tool results into ONE user message', () => {
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is in notes.md, and what is 6*7?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'call_1', name: 'read_file', input: { path: 'notes.md' } },
          { type: 'tool_use', id: 'call_2', name: 'calculator', input: { expression: '6*7' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: 'ENOENT: notes.md does not exist', is_error: true },
          { type: 'tool_result', tool_use_id: 'call_2', content: '42' },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'notes.md is missing; 6*7 is 42.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Thanks.' }] },
    ]);
  });

  it('marks every non-ok result code as is_error', () => {
    for (const code of ['error', 'TOOL_OUTCOME_UNKNOWN', 'TOOL_NOT_STARTED'] as const) {
      const b = anthropicRequestBody({ ...request, messages: [{ role: 'tool', toolCallId: 't', name: 'n', code, content: 'x' }] });
      expect(b.messages[0]?.content[0]).toMatchObject({ type: 'tool_result', is_error: true });
    }
  });

  it('puts tool results before user text typed while the tools ran, in one user turn', () => {
    const b = anthropicRequestBody({
      ...request,
      messages: [
        { role: 'assistant', text: '', toolCalls: [{ id: 't1', name: 'read_file', input: {} }] },
        { role: 'user', text: 'also check b.md' },
        { role: 'tool', toolCallId: 't1', name: 'read_file', code: 'ok', content: 'A' },
      ],
    });
    expect(b.messages).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read_file', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'A' },
          { type: 'text', text: 'also check b.md' },
        ],
      },
    ]);
  });

  it('drops an empty assistant turn instead of sending empty content', () => {
    const b = anthropicRequestBody({
      ...request,
      messages: [
        { role: 'user', text: 'a' },
        { role: 'assistant', text: '', toolCalls: [] },
        { role: 'user', text: 'b' },
      ],
    });
    expect(b.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }]);
  });

  it('omits system and tools when there are none', () => {
    const { system: _s, ...noSystem } = request;
    const b = anthropicRequestBody({ ...noSystem, tools: [] });
    expect('system' in b).toBe(false);
    expect('tools' in b).toBe(false);
  });
});

describe('OpenAI Chat Completions request body', () => {
  const body = openAiRequestBody(request, 'https://api.openai.com/v1');

  it('puts the system prompt first and maps tool calls and results', () => {
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'What is in notes.md, and what is 6*7?' },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"notes.md"}' } },
          { id: 'call_2', type: 'function', function: { name: 'calculator', arguments: '{"expression":"6*7"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'ENOENT: notes.md does not exist' },
      { role: 'tool', tool_call_id: 'call_2', content: '42' },
      { role: 'assistant', content: 'notes.md is missing; 6*7 is 42.' },
      { role: 'user', content: 'Thanks.' },
    ]);
  });

  it('sends content null beside tool calls when there was no text', () => {
    const b = openAiRequestBody({ ...request, messages: [{ role: 'assistant', text: '', toolCalls: [{ id: 'c', name: 'n', input: {} }] }] }, 'http://localhost:11434/v1');
    expect(b.messages[1]).toMatchObject({ role: 'assistant', content: null });
  });

  it('re-sends the parsed input, not the invalid text, of a call whose JSON was invalid', () => {
    const b = openAiRequestBody(
      { ...request, messages: [{ role: 'assistant', text: '', toolCalls: [{ id: 'c', name: 'n', input: {}, invalidJson: '{"a":' }] }] },
      'http://localhost:8000/v1',
    );
    expect(b.messages[1]).toMatchObject({ tool_calls: [{ function: { arguments: '{}' } }] });
  });

  it('streams with usage and declares tools as functions', () => {
    expect(body).toMatchObject({ model: 'm', stream: true, stream_options: { include_usage: true } });
    expect(body.tools).toEqual([{ type: 'function', function: { name: 'read_file', description: 'Read a file.', parameters: request.tools[0]!.inputSchema } }]);
  });

  it('omits tools when there are none (OpenAI rejects an empty array)', () => {
    expect('tools' in openAiRequestBody({ ...request, tools: [] }, 'https://api.openai.com/v1')).toBe(false);
  });

  it.each([
    ['https://api.openai.com/v1', 'max_completion_tokens'],
    ['https://my-resource.openai.azure.com/openai/deployments/x', 'max_completion_tokens'],
    ['http://localhost:11434/v1', 'max_tokens'],
    ['http://vllm.internal:8000/v1', 'max_tokens'],
    ['https://openrouter.ai/api/v1', 'max_tokens'],
    ['not a url', 'max_tokens'],
  ])('caps output for %s with %s', (baseUrl, field) => {
    expect(maxTokensField(baseUrl)).toBe(field);
    expect(openAiRequestBody(request, baseUrl)).toHaveProperty(field, 1024);
  });
});

describe('Gemini request body', () => {
  const body = geminiRequestBody(request);

  it('maps roles to user/model, calls to functionCall and results to functionResponse output/error', () => {
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'What is in notes.md, and what is 6*7?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Let me check.' },
          { functionCall: { name: 'read_file', args: { path: 'notes.md' } } },
          { functionCall: { name: 'calculator', args: { expression: '6*7' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'read_file', response: { error: 'ENOENT: notes.md does not exist' } } },
          { functionResponse: { name: 'calculator', response: { output: '42' } } },
        ],
      },
      { role: 'model', parts: [{ text: 'notes.md is missing; 6*7 is 42.' }] },
      { role: 'user', parts: [{ text: 'Thanks.' }] },
    ]);
  });

  it('sends system, tools (as JSON Schema) and maxOutputTokens', () => {
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'You are terse.' }] });
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'read_file', description: 'Read a file.', parametersJsonSchema: { type: 'object', properties: { path: { type: 'string' } }, additionalProperties: false } },
        ],
      },
    ]);
    expect(body.generationConfig).toEqual({ maxOutputTokens: 1024 });
  });

  it('builds the streaming URL with alt=sse and never a key parameter', () => {
    expect(geminiUrl('https://generativelanguage.googleapis.com/', 'gemini-2.5-flash')).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(geminiUrl('https://g.test', 'models/gemini-2.5-pro')).toBe('https://g.test/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
  });
});
