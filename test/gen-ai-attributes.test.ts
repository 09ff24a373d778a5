import { describe, expect, it } from 'vitest';
import { genAiResponseAttributes, genAiSpanName } from '../contracts/gen-ai-attributes';
import type { AssistantMessage } from '../contracts/messages';

const reply: AssistantMessage = {
  role: 'assistant',
  text: 'hi',
  toolCalls: [],
  stopReason: 'end_turn',
  usage: { inputTokens: 3, outputTokens: 1 },
};

describe('GenAI span attributes', () => {
  it('names the response model the provider said answered', () => {
    expect(genAiResponseAttributes('anthropic:claude-sonnet-4-5', { ...reply, responseModel: 'claude-sonnet-4-5-20250929' })).toMatchObject({ 'gen_ai.response.model': 'claude-sonnet-4-5-20250929' });
  });

  it('falls back to the requested model when the stream named none', () => {
    expect(genAiResponseAttributes('google:gemini-2.5-flash', reply)).toMatchObject({ 'gen_ai.response.model': 'gemini-2.5-flash' });
  });

  it('names the call span {operation} {request model}, without the provider prefix', () => {
    expect(genAiSpanName('openai:gpt-4o')).toBe('chat gpt-4o');
  });
});
