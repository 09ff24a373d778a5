import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { unpairedToolCalls } from './support/pairing';

/**
 * The scripted LLM refuses a request whose tool calls and results are not paired, as each
 * real provider does (a 400 invalid-request error in its words), and records it as
 * `unpaired`, so a session test can assert that the agent never sent one.
 */

let llm: ScriptedLlm;
const agent = new Agent();
let counter = 0;
const modelName = () => `pairing-${++counter}`;

beforeAll(async () => {
  llm = await startScriptedLlm();
});
afterAll(async () => {
  await llm.close();
  await agent.close();
});

async function post(path: string, body: unknown): Promise<{ status: number; error: Record<string, unknown> | undefined }> {
  const res = await request(`${llm.url}${path}`, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.body.text();
  return { status: res.statusCode, error: res.statusCode >= 400 ? (JSON.parse(text) as { error: Record<string, unknown> }).error : undefined };
}

const anthropic = (model: string, messages: unknown[]) => post('/v1/messages', { model, stream: true, max_tokens: 100, messages });
const openai = (model: string, messages: unknown[]) => post('/chat/completions', { model, stream: true, messages });
const gemini = (model: string, contents: unknown[]) => post(`/v1beta/models/${model}:streamGenerateContent?alt=sse`, { contents });

const toolUse = (id: string) => ({ type: 'tool_use', id, name: 'calculator', input: { expression: '1+1' } });
const toolResult = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: '2' });
const openaiCall = (id: string) => ({ id, type: 'function', function: { name: 'calculator', arguments: '{"expression":"1+1"}' } });
const call = { functionCall: { name: 'calculator', args: { expression: '1+1' } } };
const response = { functionResponse: { name: 'calculator', response: { output: '2' } } };

describe('the scripted LLM refuses a tool call split from its result, as the providers do', () => {
  it('Anthropic: a tool_use without a tool_result in the next message, and a tool_result without its tool_use', async () => {
    const model = modelName();
    const missing = await anthropic(model, [
      { role: 'user', content: 'add' },
      { role: 'assistant', content: [toolUse('toolu_a'), toolUse('toolu_b')] },
      { role: 'user', content: [toolResult('toolu_a')] },
    ]);
    expect(missing).toEqual({
      status: 400,
      error: {
        type: 'invalid_request_error',
        message:
          'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
      },
    });
    const orphan = await anthropic(model, [
      { role: 'user', content: 'add' },
      { role: 'assistant', content: [{ type: 'text', text: 'sure' }] },
      { role: 'user', content: [{ type: 'text', text: 'the result:' }, toolResult('toolu_c')] },
    ]);
    expect(orphan.error?.message).toBe(
      'messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_c. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    );
    expect(llm.requests({ model, replyKind: 'unpaired' })).toHaveLength(2);
  });

  it('Anthropic: a result two messages after its call is refused, but a user turn split over two messages is joined as the API joins it', async () => {
    const model = modelName();
    const late = await anthropic(model, [
      { role: 'user', content: 'add' },
      { role: 'assistant', content: [toolUse('toolu_d')] },
      { role: 'user', content: 'hurry' },
      { role: 'assistant', content: [{ type: 'text', text: 'waiting' }] },
      { role: 'user', content: [toolResult('toolu_d')] },
    ]);
    expect(late.error?.message).toMatch(/^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_d\./);
    llm.script(model, { kind: 'text', text: 'two' });
    const joined = await anthropic(model, [
      { role: 'user', content: 'add' },
      { role: 'assistant', content: [toolUse('toolu_e')] },
      { role: 'user', content: [toolResult('toolu_e')] },
      { role: 'user', content: 'and now?' },
    ]);
    expect(joined).toEqual({ status: 200, error: undefined });
    expect(llm.requests({ model }).map((r) => r.replyKind)).toEqual(['unpaired', 'text']);
  });

  it('OpenAI: tool_calls not answered by the tool messages right after, and a tool message answering nothing', async () => {
    const model = modelName();
    const missing = await openai(model, [
      { role: 'user', content: 'add' },
      { role: 'assistant', content: null, tool_calls: [openaiCall('call_a'), openaiCall('call_b')] },
      { role: 'tool', tool_call_id: 'call_b', content: '2' },
      { role: 'user', content: 'well?' },
    ]);
    expect(missing).toEqual({
      status: 400,
      error: {
        message:
          "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_a",
        type: 'invalid_request_error',
        param: 'messages.[1].role',
        code: null,
      },
    });
    const orphan = await openai(model, [
      { role: 'user', content: 'add' },
      { role: 'tool', tool_call_id: 'call_c', content: '2' },
    ]);
    expect(orphan.error).toMatchObject({ message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", param: 'messages.[1].role' });
    expect(llm.requests({ model, replyKind: 'unpaired' })).toHaveLength(2);
  });

  it('Gemini: fewer function responses than calls, responses after a turn without calls, and more responses than calls', async () => {
    const model = modelName();
    const missing = await gemini(model, [
      { role: 'user', parts: [{ text: 'add' }] },
      { role: 'model', parts: [call, call] },
      { role: 'user', parts: [response] },
    ]);
    expect(missing).toEqual({
      status: 400,
      error: {
        code: 400,
        status: 'INVALID_ARGUMENT',
        message: 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.',
      },
    });
    const orphan = await gemini(model, [
      { role: 'user', parts: [{ text: 'add' }] },
      { role: 'model', parts: [{ text: 'sure' }] },
      { role: 'user', parts: [response] },
    ]);
    expect(orphan.error?.message).toBe('Please ensure that function response turn comes immediately after a function call turn.');
    const extra = await gemini(model, [
      { role: 'user', parts: [{ text: 'add' }] },
      { role: 'model', parts: [call] },
      { role: 'user', parts: [response, response] },
    ]);
    expect(extra.error?.message).toMatch(/^Please ensure that the number of function response parts is equal to the number of function call parts/);
    expect(llm.requests({ model, replyKind: 'unpaired' })).toHaveLength(3);
  });

  it('plays no scripted reply for a refused request: the reply waits for a request that is paired', async () => {
    const model = modelName();
    llm.script(model, { kind: 'text', text: 'paired at last' });
    expect((await anthropic(model, [{ role: 'assistant', content: [toolUse('toolu_f')] }])).status).toBe(400);
    expect(llm.pending(model)).toBe(1);
    const paired = await anthropic(model, [
      { role: 'user', content: 'add' },
      { role: 'assistant', content: [toolUse('toolu_f')] },
      { role: 'user', content: [toolResult('toolu_f')] },
    ]);
    expect(paired.status).toBe(200);
    expect(llm.pending(model)).toBe(0);
  });
});

describe('the pairing check tests run on recorded bodies (the one the server refuses by)', () => {
  it('names a call without its result by its id, and a result without its call as result:ID', () => {
    expect(
      unpairedToolCalls({
        messages: [
          { role: 'assistant', content: [toolUse('toolu_g')] },
          { role: 'user', content: 'no result here' },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: [toolResult('toolu_g')] },
        ],
      }),
    ).toEqual(['toolu_g', 'result:toolu_g']);
    expect(unpairedToolCalls({ messages: [{ role: 'tool', tool_call_id: 'call_h', content: '2' }] })).toEqual(['result:call_h']);
    expect(unpairedToolCalls({ contents: [{ role: 'model', parts: [{ text: 'hi' }] }, { role: 'user', parts: [response] }] })).toEqual(['result:calculator@1.0']);
  });
});

describe('the scripted LLM streams a long text on the Anthropic wire', () => {
  it('sends 1.6 MB of text at the default chunk size (200 000 deltas) without overflowing the call stack', async () => {
    const model = modelName();
    const text = 'z'.repeat(1_600_000);
    llm.script(model, { kind: 'text', text });
    const res = await request(`${llm.url}/v1/messages`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream: true, max_tokens: 100, messages: [{ role: 'user', content: 'a lot' }] }),
    });
    const raw = await res.body.text();
    expect(res.statusCode).toBe(200);
    const deltas = raw.split('\n').filter((line) => line.startsWith('data: ') && line.includes('"text_delta"'));
    expect(deltas).toHaveLength(200_000);
    expect(deltas.map((line) => (JSON.parse(line.slice(6)) as { delta: { text: string } }).delta.text).join('')).toBe(text);
    expect(llm.requests({ model })[0]).toMatchObject({ replyKind: 'text', outcome: 'completed' });
  });
});
