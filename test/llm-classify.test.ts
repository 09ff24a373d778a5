import { describe, expect, it } from 'vitest';
import { classifyHttpError, classifyNetworkError, classifyStreamError, malformedFrameError, truncatedStreamError } from '../activities/llm/classify';
import { LlmError } from '../activities/llm/llm-error';
import type { LlmErrorType } from '../contracts/errors';

const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);
const json = (v: unknown) => JSON.stringify(v);
const anthropicBody = (type: string, message: string) => json({ type: 'error', error: { type, message } });
const openAiBody = (type: string, code: string | null, message: string) => json({ error: { message, type, param: null, code } });
const geminiBody = (code: number, status: string, message: string, details?: unknown[]) =>
  json({ error: { code, message, status, ...(details && { details }) } });

interface Row {
  name: string;
  provider: string;
  status: number;
  body: string;
  headers?: Record<string, string>;
  type: LlmErrorType;
}

const RETRYABLE: Row[] = [
  { name: '408 request timeout', provider: 'openai', status: 408, body: '', type: 'timeout' },
  { name: '429 Anthropic rate limit', provider: 'anthropic', status: 429, body: anthropicBody('rate_limit_error', 'Number of requests has exceeded your per-minute rate limit'), type: 'rate_limit' },
  { name: '429 OpenAI rate limit', provider: 'openai', status: 429, body: openAiBody('requests', 'rate_limit_exceeded', 'Rate limit reached for requests'), type: 'rate_limit' },
  { name: '429 Gemini RESOURCE_EXHAUSTED', provider: 'google', status: 429, body: geminiBody(429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).'), type: 'rate_limit' },
  { name: '429 with no body', provider: 'openai', status: 429, body: '', type: 'rate_limit' },
  { name: '529 Anthropic overloaded', provider: 'anthropic', status: 529, body: anthropicBody('overloaded_error', 'Overloaded'), type: 'overloaded' },
  { name: '500', provider: 'anthropic', status: 500, body: anthropicBody('api_error', 'Internal server error'), type: 'server_error' },
  { name: '502 HTML from a proxy', provider: 'openai', status: 502, body: '<html><body>Bad Gateway</body></html>', type: 'server_error' },
  { name: '503 Gemini UNAVAILABLE', provider: 'google', status: 503, body: geminiBody(503, 'UNAVAILABLE', 'The model is overloaded.'), type: 'server_error' },
  { name: '504', provider: 'google', status: 504, body: '', type: 'server_error' },
  { name: '599', provider: 'openai', status: 599, body: '', type: 'server_error' },
];

const NOT_RETRYABLE: Row[] = [
  { name: '401 Anthropic', provider: 'anthropic', status: 401, body: anthropicBody('authentication_error', 'invalid x-api-key'), type: 'auth_error' },
  { name: '401 OpenAI', provider: 'openai', status: 401, body: openAiBody('invalid_request_error', 'invalid_api_key', 'Incorrect API key provided'), type: 'auth_error' },
  { name: '403 Anthropic permission', provider: 'anthropic', status: 403, body: anthropicBody('permission_error', 'no permission'), type: 'auth_error' },
  { name: '403 Gemini PERMISSION_DENIED', provider: 'google', status: 403, body: geminiBody(403, 'PERMISSION_DENIED', 'Permission denied.'), type: 'auth_error' },
  {
    name: "400 Gemini bad key (Gemini's 401)",
    provider: 'google',
    status: 400,
    body: geminiBody(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }]),
    type: 'auth_error',
  },
  { name: '413', provider: 'anthropic', status: 413, body: anthropicBody('request_too_large', 'Request exceeds the maximum allowed number of bytes.'), type: 'context_overflow' },
  { name: '400 Anthropic "prompt is too long"', provider: 'anthropic', status: 400, body: anthropicBody('invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'), type: 'context_overflow' },
  {
    name: '400 Anthropic input + max_tokens over the context limit',
    provider: 'anthropic',
    status: 400,
    body: anthropicBody('invalid_request_error', 'input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again'),
    type: 'context_overflow',
  },
  {
    name: '400 OpenAI context_length_exceeded',
    provider: 'openai',
    status: 400,
    body: openAiBody('invalid_request_error', 'context_length_exceeded', "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."),
    type: 'context_overflow',
  },
  { name: '400 vLLM maximum context length (no code)', provider: 'openai', status: 400, body: json({ object: 'error', message: "This model's maximum context length is 4096 tokens.", type: 'BadRequestError', code: 400 }), type: 'context_overflow' },
  {
    name: '400 Gemini input token count exceeds the maximum',
    provider: 'google',
    status: 400,
    body: geminiBody(400, 'INVALID_ARGUMENT', 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).'),
    type: 'context_overflow',
  },
  {
    name: '429 OpenAI one request above the per-minute token limit',
    provider: 'openai',
    status: 429,
    body: openAiBody('tokens', 'rate_limit_exceeded', 'Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 50000.'),
    type: 'context_overflow',
  },
  {
    name: '400 Azure OpenAI prompt filtered',
    provider: 'openai',
    status: 400,
    body: json({ error: { message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.", type: null, param: 'prompt', code: 'content_filter', status: 400 } }),
    type: 'content_blocked',
  },
  { name: '400 OpenAI content_policy_violation', provider: 'openai', status: 400, body: openAiBody('invalid_request_error', 'content_policy_violation', 'Your request was rejected as a result of our safety system.'), type: 'content_blocked' },
  { name: '400 other', provider: 'anthropic', status: 400, body: anthropicBody('invalid_request_error', 'messages: field required'), type: 'invalid_request' },
  { name: '404 model not found', provider: 'openai', status: 404, body: openAiBody('invalid_request_error', 'model_not_found', 'The model does not exist'), type: 'invalid_request' },
  { name: '422', provider: 'openai', status: 422, body: '{"detail":"bad"}', type: 'invalid_request' },
  { name: '400 Ollama string error', provider: 'openai', status: 400, body: '{"error":"model \\"llama9\\" not found, try pulling it first"}', type: 'invalid_request' },
  { name: '409', provider: 'google', status: 409, body: '', type: 'invalid_request' },
  { name: '429 OpenAI insufficient_quota', provider: 'openai', status: 429, body: openAiBody('insufficient_quota', 'insufficient_quota', 'You exceeded your current quota, please check your plan and billing details.'), type: 'quota_exceeded' },
  { name: '429 stating a spend limit in words', provider: 'openai', status: 429, body: json({ error: { message: 'Monthly spend limit reached for this project.' } }), type: 'quota_exceeded' },
  { name: '429 out of credits (gateway)', provider: 'openai', status: 429, body: json({ error: { message: 'Insufficient credits. Add more using https://example.test/credits' } }), type: 'quota_exceeded' },
  { name: '402 payment required', provider: 'openai', status: 402, body: '', type: 'quota_exceeded' },
  { name: '402 Anthropic billing_error', provider: 'anthropic', status: 402, body: anthropicBody('billing_error', 'Your credit balance is too low to access the Anthropic API.'), type: 'quota_exceeded' },
  { name: '400 Anthropic credit balance too low', provider: 'anthropic', status: 400, body: anthropicBody('invalid_request_error', 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.'), type: 'quota_exceeded' },
  { name: '400 Anthropic API usage limits reached', provider: 'anthropic', status: 400, body: anthropicBody('invalid_request_error', 'You have reached your specified API usage limits. You will regain access on 2025-02-01 at 00:00 UTC.'), type: 'quota_exceeded' },
  { name: '200 (not an error status)', provider: 'openai', status: 200, body: '', type: 'unknown' },
  { name: '304', provider: 'openai', status: 304, body: '', type: 'unknown' },
  { name: '600', provider: 'openai', status: 600, body: '', type: 'unknown' },
];

/** Key-shaped but fake; built at run time so secret scanners don't take the source for a leak. */
const FAKE_GOOGLE_KEY = ['AIza', 'SyA1234567890abcdefghijklmnopqrstuv'].join('');

describe('classifyHttpError', () => {
  it.each(RETRYABLE)('$name → $type, retryable', ({ provider, status, body, headers, type }) => {
    const e = classifyHttpError(provider, status, body, headers, NOW);
    expect(e).toMatchObject({ type, retryable: true, status, provider });
  });

  it.each(NOT_RETRYABLE)('$name → $type, not retryable', ({ provider, status, body, headers, type }) => {
    const e = classifyHttpError(provider, status, body, headers, NOW);
    expect(e).toMatchObject({ type, retryable: false, status, provider });
  });

  it('names provider, method, path and status in the message, with the provider error type and text', () => {
    const e = classifyHttpError('anthropic', 529, anthropicBody('overloaded_error', 'Overloaded'), undefined, NOW, 'POST /v1/messages');
    expect(e.message).toBe('anthropic POST /v1/messages → 529 overloaded_error: Overloaded');
  });

  it('prefers the specific OpenAI code over its type in the message', () => {
    const e = classifyHttpError('openai', 400, openAiBody('invalid_request_error', 'context_length_exceeded', 'too long'), undefined, NOW, 'POST /v1/chat/completions');
    expect(e.message).toBe('openai POST /v1/chat/completions → 400 context_length_exceeded: too long');
  });

  it('names Gemini errors by their status name', () => {
    const e = classifyHttpError('google', 503, geminiBody(503, 'UNAVAILABLE', 'The model is overloaded.'), undefined, NOW, 'POST /v1beta/models/gemini-2.5-flash:streamGenerateContent');
    expect(e.message).toBe('google POST /v1beta/models/gemini-2.5-flash:streamGenerateContent → 503 UNAVAILABLE: The model is overloaded.');
  });

  it('uses the status text when the body is empty', () => {
    expect(classifyHttpError('openai', 503, '', undefined, NOW).message).toBe('openai → 503 Service Unavailable');
  });

  it('clips a huge body in the message', () => {
    const e = classifyHttpError('openai', 500, 'x'.repeat(10_000), undefined, NOW);
    expect(e.message.length).toBeLessThan(400);
  });

  it('masks key-shaped strings a provider echoes back', () => {
    const e = classifyHttpError('openai', 401, openAiBody('invalid_request_error', 'invalid_api_key', 'Incorrect API key provided: sk-proj-abcd****************wxyz.'), undefined, NOW);
    expect(e.message).not.toMatch(/sk-proj/);
    expect(e.message).toContain('[redacted]');
    const g = classifyHttpError('google', 400, geminiBody(400, 'INVALID_ARGUMENT', `key ${FAKE_GOOGLE_KEY} is bad`), undefined, NOW);
    expect(g.message).not.toContain('AIza');
  });

  describe('server-stated waits', () => {
    it('carries Retry-After on a 429 as retryAfterMs', () => {
      expect(classifyHttpError('anthropic', 429, '', { 'retry-after': '3' }, NOW)).toMatchObject({ type: 'rate_limit', retryAfterMs: 3_000 });
    });

    it('carries Retry-After on a 503 and a 529 too', () => {
      expect(classifyHttpError('openai', 503, '', { 'retry-after': '2' }, NOW).retryAfterMs).toBe(2_000);
      expect(classifyHttpError('anthropic', 529, '', { 'retry-after': '5' }, NOW).retryAfterMs).toBe(5_000);
    });

    it("reads Gemini's RetryInfo from the body as a stated wait", () => {
      const body = geminiBody(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for metric: generate_content_free_tier_requests. Please retry in 38.4s.', [
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '38.4s' },
      ]);
      expect(classifyHttpError('google', 429, body, undefined, NOW)).toMatchObject({ type: 'rate_limit', retryAfterMs: 38_400 });
    });

    it('takes the larger of a header and a body-stated wait', () => {
      const body = geminiBody(429, 'RESOURCE_EXHAUSTED', 'slow down', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '4s' }]);
      expect(classifyHttpError('google', 429, body, { 'retry-after': '9' }, NOW).retryAfterMs).toBe(9_000);
    });

    it("trusts a stated wait over spend-limit wording: Gemini's per-minute 429 mentions billing", () => {
      const body = geminiBody(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota, please check your plan and billing details.', [
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '39s' },
      ]);
      expect(classifyHttpError('google', 429, body, undefined, NOW)).toMatchObject({ type: 'rate_limit', retryAfterMs: 39_000 });
      expect(classifyHttpError('openai', 429, json({ error: { message: 'check your billing' } }), { 'retry-after': '1' }, NOW).type).toBe('rate_limit');
    });

    it('trusts an explicit rate-limit code over billing wording', () => {
      const body = openAiBody('requests', 'rate_limit_exceeded', 'Rate limit reached on requests per min (RPM): Limit 3. Add a payment method at https://platform.openai.com/account/billing to increase your rate limit.');
      expect(classifyHttpError('openai', 429, body, undefined, NOW).type).toBe('rate_limit');
    });

    it('believes insufficient_quota even when a wait is stated', () => {
      const e = classifyHttpError('openai', 429, openAiBody('insufficient_quota', 'insufficient_quota', 'quota'), { 'retry-after': '1' }, NOW);
      expect(e.type).toBe('quota_exceeded');
      expect(e.retryAfterMs).toBeUndefined();
    });

    it('keeps a stated wait off failures that waiting does not cure', () => {
      expect(classifyHttpError('anthropic', 401, '', { 'retry-after': '3' }, NOW).retryAfterMs).toBeUndefined();
    });

    it('leaves retryAfterMs unset when nothing was stated', () => {
      expect(classifyHttpError('anthropic', 429, '', {}, NOW).retryAfterMs).toBeUndefined();
    });
  });
});

describe('classifyStreamError: an error inside a 200 stream is mapped like the HTTP error of its type', () => {
  it.each([
    ['overloaded_error', 'overloaded', true],
    ['rate_limit_error', 'rate_limit', true],
    ['api_error', 'server_error', true],
    ['timeout_error', 'timeout', true],
    ['invalid_request_error', 'invalid_request', false],
    ['authentication_error', 'auth_error', false],
    ['permission_error', 'auth_error', false],
    ['not_found_error', 'invalid_request', false],
    ['request_too_large', 'context_overflow', false],
    ['billing_error', 'quota_exceeded', false],
  ] as const)('Anthropic %s → %s', (errorType, type, retryable) => {
    const e = classifyStreamError('anthropic', { type: 'error', error: { type: errorType, message: 'm' } }, 'POST /v1/messages');
    expect(e).toMatchObject({ type, retryable, provider: 'anthropic' });
    expect(e.status).toBeUndefined();
  });

  it('reads the message like an HTTP body: "prompt is too long" is a context overflow', () => {
    const e = classifyStreamError('anthropic', { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 1 > 0' } });
    expect(e.type).toBe('context_overflow');
  });

  it('says it was in-stream in the message', () => {
    const e = classifyStreamError('anthropic', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'POST /v1/messages');
    expect(e.message).toBe('anthropic POST /v1/messages → overloaded: in-stream overloaded_error: Overloaded');
  });

  it.each([
    [{ error: { message: 'boom', type: 'server_error', code: null } }, 'server_error'],
    [{ error: { message: 'slow', type: 'requests', code: 'rate_limit_exceeded' } }, 'rate_limit'],
    [{ error: { message: 'too long', type: 'invalid_request_error', code: 'context_length_exceeded' } }, 'context_overflow'],
    [{ error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } }, 'quota_exceeded'],
    [{ error: { message: 'upstream died', code: 502 } }, 'server_error'],
  ] as const)('OpenAI-compatible %j → %s', (payload, type) => {
    expect(classifyStreamError('openai', payload).type).toBe(type);
  });

  it.each([
    [{ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }, 'server_error'],
    [{ error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED' } }, 'rate_limit'],
    [{ error: { code: 500, message: 'internal', status: 'INTERNAL' } }, 'server_error'],
    [{ error: { message: 'bad', status: 'INVALID_ARGUMENT' } }, 'invalid_request'],
    [{ error: { message: 'late', status: 'DEADLINE_EXCEEDED' } }, 'server_error'],
  ] as const)('Gemini %j → %s', (payload, type) => {
    expect(classifyStreamError('google', payload).type).toBe(type);
  });

  it('carries a Gemini RetryInfo wait from an in-stream error', () => {
    const e = classifyStreamError('google', {
      error: { code: 429, message: 'slow', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '2s' }] },
    });
    expect(e).toMatchObject({ type: 'rate_limit', retryAfterMs: 2_000 });
  });

  it.each([[{ error: { message: 'something odd' } }], [{ type: 'error', error: { type: 'brand_new_error', message: '?' } }], ['plain text'], [null]])(
    'an unrecognised error %j is unknown, not retried',
    (payload) => {
      expect(classifyStreamError('anthropic', payload)).toMatchObject({ type: 'unknown', retryable: false });
    },
  );
});

describe('classifyNetworkError', () => {
  const withCode = (code: string, message = `${code} happened`) => Object.assign(new Error(message), { code });

  it.each(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED', 'UND_ERR_DESTROYED', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 'ERR_TLS_CERT_ALTNAME_INVALID', 'ERR_SSL_WRONG_VERSION_NUMBER', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'EPROTO', 'HPE_INVALID_CONSTANT'])(
    '%s is a retryable network_error',
    (code) => {
      expect(classifyNetworkError('openai', withCode(code))).toMatchObject({ type: 'network_error', retryable: true, provider: 'openai' });
    },
  );

  it('finds the code in the cause chain (fetch-style "fetch failed")', () => {
    const err = new TypeError('fetch failed', { cause: withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9') });
    const e = classifyNetworkError('anthropic', err, 'POST /v1/messages');
    expect(e.type).toBe('network_error');
    expect(e.message).toBe('anthropic POST /v1/messages → network_error: ECONNREFUSED connect ECONNREFUSED 127.0.0.1:9');
  });

  it("finds the code inside a happy-eyeballs AggregateError", () => {
    const err = new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'all addresses failed');
    expect(classifyNetworkError('google', err).type).toBe('network_error');
  });

  it.each([[new TypeError('x is not a function')], [withCode('UND_ERR_INVALID_ARG')], ['a string'], [undefined]])('anything else (%s) is unknown, not retried', (err) => {
    expect(classifyNetworkError('openai', err)).toMatchObject({ type: 'unknown', retryable: false });
  });

  it('passes an LlmError through unchanged', () => {
    const original = new LlmError({ type: 'rate_limit', provider: 'openai', detail: 'x' });
    expect(classifyNetworkError('openai', original)).toBe(original);
  });
});

describe('stream-shape failures', () => {
  it('a stream that ends without its sentinel is a retryable network_error naming the sentinel', () => {
    const e = truncatedStreamError('anthropic', 'message_stop', 'POST /v1/messages');
    expect(e).toMatchObject({ type: 'network_error', retryable: true });
    expect(e.message).toBe('anthropic POST /v1/messages → network_error: stream ended before message_stop');
  });

  it('a frame that is not JSON is a retryable network_error quoting only its start', () => {
    const e = malformedFrameError('openai', `{"choices":[${'x'.repeat(500)}`, 'POST /v1/chat/completions');
    expect(e).toMatchObject({ type: 'network_error', retryable: true });
    expect(e.message.length).toBeLessThan(200);
  });
});
