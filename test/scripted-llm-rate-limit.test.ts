/**
 * The scripted LLM's rate-limit mode: a sliding window per model on requests, input and
 * output tokens, refused above it with each provider's own 429, which the agent's own
 * classification reads as `rate_limit` with the wait the provider stated; and the request
 * log's window peak that the fleet-limit tests compare with an allowance.
 */
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyHttpError } from '../activities/llm/classify';
import { serverStatedWaitMs } from '../activities/llm/retry-after';
import { RateLimits } from '../testing/scripted-llm/rate-limit';
import { startScriptedLlm, windowPeak, type ScriptedLlm } from '../testing/scripted-llm/server';

let llm: ScriptedLlm;
const agent = new Agent();
let counter = 0;
/** An echo model: answered without a script, fresh per test so no test counts another's requests. */
const modelName = () => `echo-limited-${++counter}`;

beforeAll(async () => {
  llm = await startScriptedLlm();
});
afterAll(async () => {
  await llm.close();
  await agent.close();
});

type Provider = 'anthropic' | 'openai' | 'google';

/** One streaming request of each provider, `chars` characters of user text. */
async function send(provider: Provider, model: string, text = 'hello') {
  const routes = {
    anthropic: { path: '/v1/messages', body: { model, max_tokens: 64, stream: true, messages: [{ role: 'user', content: text }] } },
    openai: { path: '/chat/completions', body: { model, stream: true, messages: [{ role: 'user', content: text }] } },
    google: { path: `/v1beta/models/${model}:streamGenerateContent?alt=sse`, body: { contents: [{ role: 'user', parts: [{ text }] }] } },
  };
  const route = routes[provider];
  const res = await request(`${llm.url}${route.path}`, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify(route.body) });
  return { status: res.statusCode, headers: res.headers as Record<string, string>, text: await res.body.text() };
}

describe('a rate-limited model', () => {
  it.each(['anthropic', 'openai', 'google'] as const)('answers %s above its input-token window with the provider 429 the agent reads as rate_limit', async (provider) => {
    const model = modelName();
    llm.setRateLimit(model, { inputTokens: 100, windowMs: 60_000 });
    expect((await send(provider, model, 'a'.repeat(200))).status).toBe(200);
    const refused = await send(provider, model, 'a'.repeat(200));

    expect(refused.status).toBe(429);
    const error = classifyHttpError(provider, refused.status, refused.text, refused.headers, Date.now());
    expect(error.type).toBe('rate_limit');
    // Anthropic's retry-after and Gemini's RetryInfo state the wait; OpenAI says it only in words and its reset header.
    if (provider !== 'openai') expect(error.retryAfterMs).toBeGreaterThan(50_000);
    expect(llm.requests({ model }).map((r) => r.replyKind)).toEqual(['echo', 'rate_limited']);
  });

  it('sends the provider rate-limit headers on every answer, remaining counting down', async () => {
    const model = modelName();
    llm.setRateLimit(model, { requests: 3, inputTokens: 10_000, outputTokens: 10_000, windowMs: 60_000 });
    const first = await send('anthropic', model);
    const second = await send('anthropic', model);
    const openai = await send('openai', model);

    expect(first.headers['anthropic-ratelimit-requests-limit']).toBe('3');
    expect(first.headers['anthropic-ratelimit-requests-remaining']).toBe('2');
    expect(second.headers['anthropic-ratelimit-requests-remaining']).toBe('1');
    expect(Number(second.headers['anthropic-ratelimit-output-tokens-remaining'])).toBeLessThan(10_000);
    expect(Date.parse(second.headers['anthropic-ratelimit-input-tokens-reset']!)).toBeGreaterThan(Date.now() + 50_000);
    expect(openai.headers['x-ratelimit-remaining-requests']).toBe('0');
    expect(openai.headers['x-ratelimit-limit-tokens']).toBe('10000');
    // The bucket ran out: its reset is the wait the agent's ladder takes from it.
    expect(serverStatedWaitMs(openai.headers, Date.now())).toBeGreaterThan(50_000);
  });

  it('plays no scripted reply for a refused request, and leaves models without a limit alone', async () => {
    const model = 'limited-scripted';
    llm.setRateLimit(model, { requests: 1, windowMs: 60_000 });
    llm.script(model, { kind: 'text', text: 'one' }, { kind: 'text', text: 'two' });
    await send('anthropic', model);
    expect((await send('anthropic', model)).status).toBe(429);
    expect(llm.pending(model)).toBe(1);

    const free = modelName();
    expect((await send('anthropic', free)).headers['anthropic-ratelimit-requests-limit']).toBeUndefined();
  });

  it('takes a limit over the control API, and names the field of a bad one', async () => {
    const model = modelName();
    const post = (body: string) => request(`${llm.url}/_scripted/_rate_limit?model=${model}`, { method: 'POST', dispatcher: agent, body });
    const good = await post(JSON.stringify({ requests: 2, windowMs: 1_000 }));
    expect(await good.body.json()).toEqual({ model, rateLimit: { requests: 2, windowMs: 1_000 } });
    const bad = await post(JSON.stringify({ requests: -1, windowMs: 1_000 }));
    expect(bad.statusCode).toBe(400);
    expect(((await bad.body.json()) as { error: string }).error).toMatch(/^scripted LLM: the rate limit for model "[^"]+": requests: /);
  });
});

describe('the rate-limit window', () => {
  it('admits again once the oldest requests have left the window, and says when', () => {
    const limits = new RateLimits();
    limits.set('m', { inputTokens: 100, windowMs: 1_000 });
    expect(limits.admit('m', 0, 60)).toMatchObject({ admitted: true });
    expect(limits.admit('m', 400, 30)).toMatchObject({ admitted: true });
    expect(limits.admit('m', 500, 30)).toMatchObject({ admitted: false, bucket: 'input_tokens', retryAfterMs: 500 });
    expect(limits.admit('m', 999, 30)).toMatchObject({ admitted: false });
    expect(limits.admit('m', 1_000, 30)).toMatchObject({ admitted: true });
  });

  it('refuses output once the window used it up, whatever the new request asks', () => {
    const limits = new RateLimits();
    limits.set('*', { outputTokens: 50, windowMs: 1_000 });
    const first = limits.admit('any', 0, 1);
    if (!(first.limited && first.admitted)) throw new Error('the first request was refused');
    first.countOutput(50);
    expect(limits.admit('any', 10, 1)).toMatchObject({ admitted: false, bucket: 'output_tokens', retryAfterMs: 990 });
    expect(limits.admit('other', 10, 1)).toMatchObject({ admitted: true });
  });

  it('finds the most any window held, by arrival', () => {
    const log = [0, 100, 900, 1_000, 1_050].map((at, i) => ({ at, tokens: 10 * (i + 1) }));
    // (50, 1050] holds 100, 900, 1000, 1050: 20 + 30 + 40 + 50.
    expect(windowPeak(log, 1_000)).toEqual({ requests: 4, tokens: 140 });
    expect(windowPeak(log, 100)).toEqual({ requests: 2, tokens: 90 });
    expect(windowPeak([], 1_000)).toEqual({ requests: 0, tokens: 0 });
  });
});
