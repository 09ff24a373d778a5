import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_STREAMS, type ProviderCall, type StreamProgress } from '../activities/llm/providers';
import { endSession, readLog, sendAndWait, startSession } from '../client/sessions';
import type { LlmRequest } from '../contracts/messages';
import type { ProviderId } from '../contracts/model-ref';
import { openAiStrictCompatible, outputSchemaNotes } from '../contracts/output-compat';
import { validateOutput } from '../contracts/output-validation';
import { OUTPUT_TOOL_NAME, type OutputSchema, type OutputSpec } from '../contracts/structured-output';
import { json } from '../testing/fake-model';
import { demoReply } from '../testing/scripted-llm/demo-model';
import { startScriptedLlm, type ScriptedLlm, type ScriptedReply } from '../testing/scripted-llm/server';
import { turnThatRead } from '../harness/turn-that-read';
import { useAgentHarness } from './support/agent-harness';
import { FIXTURES_MISSING, fixtureLines, fixturesPresent, frameAsApi, playCut, startFixtureServer, type FixtureServer } from './support/fixture-stream-server';

/**
 * Structured output on the wire (#28): what each adapter sends for a turn with an output
 * schema (the provider's native mode, the schema as written), how each provider's answer
 * comes back as the message's text, the scripted LLM's `json` answer and request log, the
 * recorded real answers, and a compaction inside such a turn (on a worker of its own, in
 * the last describe, which alone starts one). A stream cut in the middle of a JSON answer,
 * retried on the ladder, is in test/llm-retries.test.ts; the workflow's side (validation,
 * repair) is test/structured-output.test.ts.
 */

/** In OpenAI's strict subset: every object closed, every property required. */
const CITY: OutputSchema = {
  type: 'object',
  properties: { city: { type: 'string' }, celsius: { type: 'number' } },
  required: ['city', 'celsius'],
  additionalProperties: false,
};
/** As zod writes an object with an optional field and a pattern: open, not all required. */
const LOOSE: OutputSchema = {
  type: 'object',
  properties: { city: { type: 'string', pattern: '^[A-Z]' }, note: { type: 'string' } },
  required: ['city'],
};
const PARIS = { city: 'Paris', celsius: 18.5 };

const READ_FILE_TOOL = {
  name: 'read_file',
  description: 'Read a file from the workspace.',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
};

describe('what a provider does with a schema (outputSchemaNotes)', () => {
  it('has nothing to say about a schema in every strict subset', () => {
    for (const provider of ['anthropic', 'openai', 'google'] as const) expect(outputSchemaNotes(provider, CITY)).toEqual([]);
    expect(openAiStrictCompatible(CITY)).toBe(true);
  });

  it("says in one line each what OpenAI's strict mode refuses, and that the schema goes non-strict", () => {
    const tags = { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } }, uniqueItems: true };
    const notes = outputSchemaNotes('openai', { ...LOOSE, properties: { city: { type: 'string' }, note: { type: 'string' }, tags } });
    expect(notes).toEqual([
      'openai strict mode needs "additionalProperties": false on every object (/, /properties/tags/items): sent non-strict, the workflow still validates',
      'openai strict mode needs every property in "required" (optional: /properties/note, /properties/tags, /properties/tags/items/properties/a): sent non-strict, the workflow still validates',
      'openai strict mode refuses uniqueItems (/properties/tags): sent non-strict, the workflow still validates',
    ]);
    expect(openAiStrictCompatible(LOOSE)).toBe(false);
  });

  it("says which keywords Gemini's response schema ignores, and Anthropic's tool takes all", () => {
    expect(outputSchemaNotes('google', LOOSE)).toEqual([
      "gemini's response schema ignores pattern (/properties/city): not enforced while the model writes, the workflow still validates",
    ]);
    expect(outputSchemaNotes('anthropic', LOOSE)).toEqual([]);
  });

  it('names three places and counts the rest, so a note stays one line', () => {
    const properties = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((k) => [k, { type: 'string' }]));
    expect(outputSchemaNotes('openai', { type: 'object', properties, additionalProperties: false })).toEqual([
      'openai strict mode needs every property in "required" (optional: /properties/a, /properties/b, /properties/c and 2 more): sent non-strict, the workflow still validates',
    ]);
  });
});

let llm: ScriptedLlm;
const agent = new Agent();
let counter = 0;

beforeAll(async () => {
  llm = await startScriptedLlm({ demo: false });
});
afterAll(async () => {
  await llm.close();
  await agent.close();
});

function scripted(prefix: string, ...replies: ScriptedReply[]): string {
  const model = `${prefix}-${++counter}`;
  llm.script(model, ...replies);
  return model;
}

function call(provider: ProviderId, progress?: (p: StreamProgress) => void): ProviderCall {
  return {
    dispatcher: agent,
    baseUrl: provider === 'openai' ? `${llm.url}/v1` : llm.url,
    apiKey: 'sk-test',
    signal: new AbortController().signal,
    idleTimeoutMs: 5_000,
    ...(progress ? { onProgress: progress } : {}),
  };
}

function request(model: string, over: Partial<LlmRequest> = {}): LlmRequest {
  return { model, system: 'Be brief.', messages: [{ role: 'user', text: 'Weather in Paris?' }], tools: [READ_FILE_TOOL], maxTokens: 256, output: { schema: CITY }, ...over };
}

const NATIVE: Record<ProviderId, (schema: OutputSchema) => unknown> = {
  openai: (schema) => ({ mode: 'json_schema', schema, strict: true }),
  google: (schema) => ({ mode: 'response_schema', schema }),
  anthropic: (schema) => ({ mode: 'answer_tool', schema, forced: true }),
};

describe.each(['anthropic', 'openai', 'google'] as const)('%s adapter under an output schema', (provider) => {
  const stream = PROVIDER_STREAMS[provider];

  it('sends the schema in the native mode and reads the JSON answer as the text, with no tool call', async () => {
    const model = scripted(provider, json(PARIS));
    const message = await stream(request(model), call(provider));
    expect(llm.requests({ model })[0]?.output).toEqual(NATIVE[provider](CITY));
    expect(JSON.parse(message.text)).toEqual(PARIS);
    expect(message.toolCalls).toEqual([]);
    expect(message.stopReason).toBe('end_turn');
  });

  it('sends nothing of it for a request without a schema', async () => {
    const model = scripted(provider, { kind: 'text', text: 'Sunny.' });
    const { output: _none, ...free } = request(model);
    await stream(free, call(provider));
    const [sent] = llm.requests({ model });
    expect(sent?.output).toBeUndefined();
    const body = JSON.stringify(sent?.body);
    for (const field of ['response_format', 'responseMimeType', 'responseJsonSchema', OUTPUT_TOOL_NAME, 'tool_choice']) expect(body).not.toContain(field);
  });
});

describe('each provider native mode in detail', () => {
  it('OpenAI: names the format final_answer, strict only for a schema in its strict subset', async () => {
    const strict = scripted('openai-strict', json(PARIS));
    await PROVIDER_STREAMS.openai(request(strict), call('openai'));
    expect((llm.requests({ model: strict })[0]?.body as { response_format: unknown }).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: OUTPUT_TOOL_NAME, schema: CITY, strict: true },
    });
    const loose = scripted('openai-loose', json({ city: 'Paris' }));
    await PROVIDER_STREAMS.openai(request(loose, { output: { schema: LOOSE } }), call('openai'));
    expect(llm.requests({ model: loose })[0]?.output).toEqual({ mode: 'json_schema', schema: LOOSE, strict: false });
  });

  it('Gemini: responseJsonSchema beside the function declarations; Gemini 2 with tools is asked in the system instruction', async () => {
    const gemini3 = scripted('gemini-3-pro-preview-structured', json(PARIS));
    await PROVIDER_STREAMS.google(request(gemini3), call('google'));
    const config = (llm.requests({ model: gemini3 })[0]?.body as { generationConfig: Record<string, unknown> }).generationConfig;
    expect(config).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: CITY });
    expect(config.responseSchema).toBeUndefined();

    // Gemini 2 refuses a JSON answer beside function declarations (the scripted LLM as the real API).
    const gemini2 = scripted('gemini-2.5-flash-structured', json(PARIS));
    const message = await PROVIDER_STREAMS.google(request(gemini2), call('google'));
    const [sent] = llm.requests({ model: gemini2 });
    expect(sent?.replyKind).toBe('json');
    expect(sent?.output).toBeUndefined();
    expect(JSON.stringify((sent?.body as { systemInstruction: unknown }).systemInstruction)).toContain(JSON.stringify(JSON.stringify(CITY)).slice(1, -1));
    expect(JSON.parse(message.text)).toEqual(PARIS);

    // Without tools, Gemini 2 takes the native mode.
    const alone = scripted('gemini-2.5-flash-alone', json(PARIS));
    await PROVIDER_STREAMS.google(request(alone, { tools: [] }), call('google'));
    expect(llm.requests({ model: alone })[0]?.output).toEqual(NATIVE.google(CITY));
  });

  it('Anthropic: the final_answer tool comes after the others, forced; with thinking on, offered and asked for in the system prompt', async () => {
    const forced = scripted('claude-forced', json(PARIS));
    await PROVIDER_STREAMS.anthropic(request(forced), call('anthropic'));
    const body = llm.requests({ model: forced })[0]?.body as { tools: { name: string; input_schema: unknown }[]; tool_choice: unknown };
    expect(body.tools.map((t) => t.name)).toEqual(['read_file', OUTPUT_TOOL_NAME]);
    expect(body.tools[1]?.input_schema).toEqual(CITY);
    expect(body.tool_choice).toEqual({ type: 'any' });

    // A forced tool with thinking on is a 400 from Anthropic (and from the scripted LLM).
    const thinking = scripted('claude-thinking', json(PARIS));
    const message = await PROVIDER_STREAMS.anthropic(request(thinking, { reasoning: 'low' }), call('anthropic'));
    const [sent] = llm.requests({ model: thinking });
    expect(sent?.output).toEqual({ mode: 'answer_tool', schema: CITY, forced: false });
    expect(JSON.stringify((sent?.body as { system: unknown }).system)).toContain(`calling the ${OUTPUT_TOOL_NAME} tool`);
    expect(JSON.parse(message.text)).toEqual(PARIS);
    expect(message.providerData).toMatchObject({ provider: 'anthropic' });
  });

  it("Anthropic: the answer's partial JSON is the progress text as it streams", async () => {
    const model = scripted('claude-progress', { kind: 'json', value: PARIS, chunkSize: 4 });
    const texts: string[] = [];
    await PROVIDER_STREAMS.anthropic(request(model), call('anthropic', (p) => texts.push(p.text)));
    const whole = JSON.stringify(PARIS);
    const partial = [...new Set(texts)].filter((t) => t !== '');
    expect(partial.at(-1)).toBe(whole);
    expect(partial.length).toBeGreaterThan(2);
    for (const t of partial) expect(whole.startsWith(t)).toBe(true);
  });

  it('Anthropic: a final_answer called beside another tool is the text, and the other call stays a call', async () => {
    const model = scripted('claude-beside', {
      kind: 'tool_calls',
      calls: [
        { name: 'read_file', input: { path: 'weather.txt' } },
        { name: OUTPUT_TOOL_NAME, input: PARIS },
      ],
    });
    const message = await PROVIDER_STREAMS.anthropic(request(model), call('anthropic'));
    expect(message.toolCalls.map((c) => c.name)).toEqual(['read_file']);
    expect(JSON.parse(message.text)).toEqual(PARIS);
    expect(message.stopReason).toBe('tool_use');
  });
});

describe("the scripted LLM's json reply, in the form the request asked for", () => {
  async function rawStream(path: string, body: Record<string, unknown>): Promise<string> {
    const response = await fetch(`${llm.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return response.text();
  }
  const messages = [{ role: 'user', content: 'Weather in Paris?' }];

  it('Anthropic: a call of the final_answer tool when the request offers it, text when it does not', async () => {
    const tools = [{ name: OUTPUT_TOOL_NAME, description: 'the answer', input_schema: CITY }];
    const offered = await rawStream('/v1/messages', { model: scripted('raw-claude', json(PARIS)), stream: true, max_tokens: 64, messages, tools, tool_choice: { type: 'any' } });
    expect(offered).toContain(`"content_block":{"type":"tool_use"`);
    expect(offered).toContain(`"name":"${OUTPUT_TOOL_NAME}"`);
    expect(offered).toContain('"stop_reason":"tool_use"');
    expect(offered).not.toContain('text_delta');
    const free = await rawStream('/v1/messages', { model: scripted('raw-claude-free', json(PARIS)), stream: true, max_tokens: 64, messages });
    expect(free).toContain('text_delta');
    expect(free).not.toContain('tool_use');
  });

  it('OpenAI and Gemini: the JSON as the answer text', async () => {
    const openai = await rawStream('/v1/chat/completions', { model: scripted('raw-gpt', json(PARIS)), stream: true, messages, response_format: { type: 'json_schema', json_schema: { name: OUTPUT_TOOL_NAME, schema: CITY, strict: true } } });
    expect(openai).toContain('"content":"{\\"city\\"');
    const gemini = await rawStream(`/v1beta/models/${scripted('raw-gemini', json(PARIS))}:streamGenerateContent?alt=sse`, {
      contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }],
      generationConfig: { responseMimeType: 'application/json', responseJsonSchema: CITY },
    });
    expect(gemini).toContain('"text":"{\\"city\\"');
  });

  it('refuses a json reply whose value is no JSON, naming the field', () => {
    expect(() => llm.script('raw-bad', { kind: 'json', value: undefined as unknown as null })).toThrow(/value/);
  });
});

describe('the offline demo model under an output schema', () => {
  const schema: OutputSchema = {
    type: 'object',
    properties: {
      answer: { type: 'string' },
      mood: { enum: ['calm', 'busy'] },
      count: { type: 'integer', minimum: 3 },
      note: { type: ['string', 'null'] },
      items: { type: 'array', minItems: 1, items: { $ref: '#/$defs/item' } },
    },
    required: ['answer', 'mood', 'count', 'note', 'items'],
    additionalProperties: false,
    $defs: { item: { type: 'object', properties: { done: { type: 'boolean' } }, required: ['done'] } },
  };
  const body = (text: string) => ({ model: 'demo', messages: [{ role: 'user', content: text }], tools: [{ type: 'function', function: { name: 'calculator' } }] });

  it('answers a value of the schema that carries what it would have said, which the workflow accepts', () => {
    const reply = demoReply('openai', body('hello'), { mode: 'json_schema', schema, strict: true });
    expect(reply.kind).toBe('json');
    const value = (reply as { value: unknown }).value;
    expect(validateOutput({ schema }, JSON.stringify(value))).toEqual({ ok: true, value });
    expect(value).toMatchObject({ answer: expect.stringContaining('offline demo model'), mood: 'calm', count: 3, note: '', items: [{ done: false }] });
  });

  it('still calls its tools first, and answers free text without a schema', () => {
    expect(demoReply('openai', body('What is 6*7?'), { mode: 'json_schema', schema, strict: true }).kind).toBe('tool_calls');
    expect(demoReply('openai', body('hello')).kind).toBe('text');
  });
});

if (!fixturesPresent) console.warn(FIXTURES_MISSING);

/** The value each recorded structured answer holds, and a schema it matches. */
const RECORDED = {
  openai: {
    fixture: 'oai-json-text-nonascii-d61558011839.chunks.txt',
    value: {
      location: 'San Francisco, CA',
      weather: { temperature: '18°C', condition: 'Partly Cloudy', humidity: '72%', windSpeed: '15 km/h', windDirection: 'NW' },
      forecast: [
        { day: 'Monday', high: '20°C', low: '14°C', condition: 'Sunny' },
        { day: 'Tuesday', high: '19°C', low: '15°C', condition: 'Mostly Cloudy' },
        { day: 'Wednesday', high: '18°C', low: '14°C', condition: 'Cloudy' },
      ],
    },
    schema: {
      type: 'object',
      properties: {
        location: { type: 'string' },
        weather: { type: 'object', properties: { temperature: { type: 'string' }, condition: { type: 'string' } }, required: ['temperature', 'condition'] },
        forecast: { type: 'array', items: { type: 'object', properties: { day: { type: 'string' }, high: { type: 'string' }, low: { type: 'string' } }, required: ['day', 'high', 'low'] } },
      },
      required: ['location', 'weather', 'forecast'],
    },
  },
  anthropic: {
    fixture: 'anthropic-json-tool.1.chunks.txt',
    value: { elements: [{ location: 'San Francisco', temperature: 58, condition: 'sunny' }] },
    schema: {
      type: 'object',
      properties: {
        elements: {
          type: 'array',
          items: { type: 'object', properties: { location: { type: 'string' }, temperature: { type: 'number' }, condition: { type: 'string' } }, required: ['location', 'temperature', 'condition'] },
        },
      },
      required: ['elements'],
    },
  },
} satisfies Partial<Record<ProviderId, { fixture: string; value: unknown; schema: OutputSchema }>>;

describe.skipIf(!fixturesPresent)('a structured answer recorded from a real API, through its adapter and the validation', () => {
  let server: FixtureServer;
  beforeAll(async () => {
    server = await startFixtureServer();
  });
  afterAll(async () => {
    await server.close();
  });

  async function play(provider: 'openai' | 'anthropic', lines: string[], output: OutputSpec) {
    const request: LlmRequest = { model: 'recorded', messages: [{ role: 'user', text: 'hi' }], tools: [], maxTokens: 1024, output };
    return (await playCut(server, agent, provider, frameAsApi(lines, provider), request)).message;
  }

  it('OpenAI json_schema, non-ASCII text split inside its UTF-8 bytes: the text is the value', async () => {
    const { fixture, value, schema } = RECORDED.openai;
    const message = await play('openai', fixtureLines(fixture), { schema });
    expect(message).toMatchObject({ toolCalls: [], stopReason: 'end_turn' });
    expect(validateOutput({ schema }, message.text)).toEqual({ ok: true, value });
  });

  it("Anthropic's forced-tool JSON mode: the tool's input is the text, and no tool call is left", async () => {
    const { fixture, value, schema } = RECORDED.anthropic;
    // Recorded for a request whose forced tool was called `json` (vercel/ai's name); this
    // adapter's is final_answer. The same answer to its request names that one.
    const lines = fixtureLines(fixture);
    const renamed = lines.map((line) => line.replace('"name":"json"', `"name":"${OUTPUT_TOOL_NAME}"`));
    expect(renamed.filter((line, i) => line !== lines[i])).toHaveLength(1);
    const message = await play('anthropic', renamed, { schema });
    expect(message).toMatchObject({ toolCalls: [], stopReason: 'end_turn', responseModel: 'claude-haiku-4-5-20251001' });
    expect(validateOutput({ schema }, message.text)).toEqual({ ok: true, value });
  });
});

describe('a compaction inside a turn with an output schema', () => {
  const h = useAgentHarness();

  it('asks for its summary as free text, and the step after it for the schema', async () => {
    const model = `structured-compaction-${Date.now()}`;
    h().llm.script(model, json(PARIS));
    // About 7 000 tokens of an 8 000-token window: past 0.75 of it, so the turn's first step compacts.
    const session = await startSession(h().client, h().env, {
      model: `anthropic:${model}`,
      tools: ['read_file'],
      contextWindow: 8_000,
      idleTimeoutMs: 120_000,
      outputSchema: CITY,
      fork: { fromWorkflowId: 'a-structured-session', events: turnThatRead('q'.repeat(28_000)) },
    });
    expect(await sendAndWait(session, 'Weather in Paris?')).toMatchObject({ status: 'completed', turn: 2 });
    const [compaction, step] = h().llm.requests({ model });
    expect(compaction).toMatchObject({ purpose: 'compact', replyKind: 'summary' });
    expect(compaction?.output).toBeUndefined();
    expect(JSON.stringify(compaction?.body)).not.toContain(OUTPUT_TOOL_NAME);
    expect(step).toMatchObject({ purpose: 'step', output: NATIVE.anthropic(CITY) });
    expect((await readLog(session)).find((e) => e.type === 'turn/end' && e.turn === 2)).toMatchObject({ output: PARIS });
    await endSession(session);
  });
});
