import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmError } from '../activities/llm/llm-error';
import { PROVIDER_STREAMS } from '../activities/llm/providers';
import type { ProviderId } from '../contracts/model-ref';
import { overloaded, stall, startFakeModel, text, toolCall, toolCalls, truncated, type FakeModel } from '../testing';

/**
 * The fake model of durable-agent-worker/testing, read by the worker's own provider
 * adapters (the code a worker runs against the real APIs) over a real socket, in each of
 * the three wire formats: what a user scripts in a line is what the worker receives.
 */
let model: FakeModel;
const dispatcher = new Agent();
beforeAll(async () => {
  model = await startFakeModel();
});
afterAll(async () => {
  await model.close();
  await dispatcher.close();
});

const PROVIDERS: { provider: ProviderId; baseUrl: () => string; apiKey: () => string }[] = [
  { provider: 'anthropic', baseUrl: () => model.providerEnv().ANTHROPIC_BASE_URL, apiKey: () => model.providerEnv().ANTHROPIC_API_KEY },
  { provider: 'openai', baseUrl: () => model.providerEnv().OPENAI_BASE_URL, apiKey: () => model.providerEnv().OPENAI_API_KEY },
  { provider: 'google', baseUrl: () => model.providerEnv().GEMINI_BASE_URL, apiKey: () => model.providerEnv().GEMINI_API_KEY },
];

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );
}

describe.each(PROVIDERS)('the fake model in the $provider wire format', ({ provider, baseUrl, apiKey }) => {
  /** One request, as the worker's LLM activity makes it, for any model name (the conversation ignores it). */
  const ask = (modelName: string, idleTimeoutMs = 5_000) =>
    PROVIDER_STREAMS[provider](
      { model: modelName, system: 'Be brief.', messages: [{ role: 'user', text: `hello from ${provider}` }], tools: [], maxTokens: 256 },
      { dispatcher, baseUrl: baseUrl(), apiKey: apiKey(), signal: new AbortController().signal, idleTimeoutMs },
    );

  it('answers with scripted text, then tool calls with their arguments, in the order scripted, whatever model is asked', async () => {
    model.reply(text('Order 7 shipped.'), toolCall('lookup_order', { id: 7 }), toolCalls({ name: 'lookup_order', input: { id: 1 } }, { name: 'refund', input: { id: 2, cents: 350 } }));
    expect(await ask('claude-sonnet-4-5')).toMatchObject({ text: 'Order 7 shipped.', toolCalls: [], stopReason: 'end_turn' });
    expect((await ask('gpt-4o')).toolCalls).toMatchObject([{ name: 'lookup_order', input: { id: 7 } }]);
    expect((await ask(model.ref(provider).split(':')[1] ?? '')).toolCalls).toMatchObject([
      { name: 'lookup_order', input: { id: 1 } },
      { name: 'refund', input: { id: 2, cents: 350 } },
    ]);
    expect(model.pending()).toBe(0);
  });

  it("answers overloaded() with a 529 and its Retry-After, which the adapter reads as the wait the server asked for", async () => {
    model.reply(overloaded({ retryAfterS: 2 }), overloaded());
    expect(await failure(ask('any'))).toMatchObject({ type: 'overloaded', retryable: true, status: 529, retryAfterMs: 2_000 });
    const plain = await failure(ask('any'));
    expect(plain).toMatchObject({ type: 'overloaded', status: 529 });
    expect((plain as LlmError).retryAfterMs).toBeUndefined();
  });

  it('ends a truncated() stream without its end frame, a retryable failure', async () => {
    model.reply(truncated());
    const e = await failure(ask('any'));
    expect(LlmError.is(e)).toBe(true);
    expect(e).toMatchObject({ type: 'network_error', retryable: true });
    expect((e as Error).message).toMatch(/stream ended before/);
  });

  it('pauses a stall() in silence: a pause under the idle limit completes the reply, one above it is cut', async () => {
    model.reply(stall(300, text('slow, but there in the end')), stall(5_000));
    const started = Date.now();
    expect((await ask('any', 2_000)).text).toBe('slow, but there in the end');
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    const e = await failure(ask('any', 200));
    expect(e).toMatchObject({ type: 'network_error', retryable: true });
    expect((e as Error).message).toContain('no data for 200 ms');
  });
});

describe('what the fake model received', () => {
  it('records each request as sent, with its provider, model, key and body, and how it was answered', async () => {
    const fake = await startFakeModel();
    try {
      fake.reply(text('hi'));
      const env = fake.providerEnv();
      await PROVIDER_STREAMS.openai(
        { model: 'gpt-4o-mini', system: 'Be brief.', messages: [{ role: 'user', text: 'Where is order 7?' }], tools: [], maxTokens: 64 },
        { dispatcher, baseUrl: env.OPENAI_BASE_URL, apiKey: env.OPENAI_API_KEY, signal: new AbortController().signal, idleTimeoutMs: 5_000 },
      );
      const [request, ...others] = await fake.waitForRequests(1);
      expect(others).toEqual([]);
      expect(request).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', replyKind: 'text', outcome: 'completed' });
      expect(request?.headers.authorization).toBe(`Bearer ${env.OPENAI_API_KEY}`);
      expect(JSON.stringify(request?.body)).toContain('Where is order 7?');
    } finally {
      await fake.close();
    }
  });

  it('refuses a request with no reply left with a 400 that names the model, recorded as unscripted', async () => {
    const fake = await startFakeModel();
    try {
      const env = fake.providerEnv();
      const e = await failure(
        PROVIDER_STREAMS.anthropic(
          { model: 'claude-haiku', system: '', messages: [{ role: 'user', text: 'hello' }], tools: [], maxTokens: 64 },
          { dispatcher, baseUrl: env.ANTHROPIC_BASE_URL, apiKey: env.ANTHROPIC_API_KEY, signal: new AbortController().signal, idleTimeoutMs: 5_000 },
        ),
      );
      expect(e).toMatchObject({ status: 400, retryable: false });
      expect((e as Error).message).toContain('"claude-haiku"');
      expect(fake.requests()).toMatchObject([{ model: 'claude-haiku', replyKind: 'unscripted' }]);
    } finally {
      await fake.close();
    }
  });
});
