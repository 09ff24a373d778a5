import { describe, expect, it } from 'vitest';
import { unpairedToolCalls } from './support/pairing';

describe('the pairing check used by the crash and bad-input tests', () => {
  it('finds an Anthropic tool_use without its tool_result', () => {
    const body = {
      messages: [
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1' }, { type: 'tool_use', id: 'toolu_2' }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1' }] },
      ],
    };
    expect(unpairedToolCalls(body)).toEqual(['toolu_2']);
  });

  it('finds an OpenAI tool call without its tool message', () => {
    const body = { messages: [{ role: 'assistant', tool_calls: [{ id: 'call_1' }, { id: 'call_2' }] }, { role: 'tool', tool_call_id: 'call_2' }] };
    expect(unpairedToolCalls(body)).toEqual(['call_1']);
  });

  it('finds a Gemini functionCall without a functionResponse in the next turn, and one answered under another name', () => {
    const body = {
      contents: [
        { role: 'user', parts: [{ text: 'go' }] },
        { role: 'model', parts: [{ functionCall: { name: 'calculator' } }, { functionCall: { name: 'read_file' } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'calculator' } }] },
        { role: 'model', parts: [{ functionCall: { name: 'write_file' } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'calculator' } }] },
      ],
    };
    expect(unpairedToolCalls(body)).toEqual(['read_file@1.1', 'write_file@3.0']);
  });

  it('passes a Gemini conversation whose every call is answered in order', () => {
    const body = {
      contents: [
        { role: 'model', parts: [{ text: 'thinking' }, { functionCall: { name: 'calculator' } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'calculator' } }] },
      ],
    };
    expect(unpairedToolCalls(body)).toEqual([]);
  });

  it('throws on a body it cannot read, rather than finding nothing', () => {
    expect(() => unpairedToolCalls({ input: [] })).toThrow(/not a request body it knows/);
    expect(() => unpairedToolCalls(undefined)).toThrow(/not a request body it knows/);
  });
});
