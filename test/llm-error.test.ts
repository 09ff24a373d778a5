import { describe, expect, it, vi } from 'vitest';
import { isAbortError, LlmAbortError } from '../activities/llm/abort-error';
import { endpointLabel, LlmError, redactSecrets } from '../activities/llm/llm-error';

describe('LlmError', () => {
  it('derives retryable from the type, so the two can not disagree', () => {
    expect(new LlmError({ type: 'rate_limit', provider: 'openai', detail: 'x' }).retryable).toBe(true);
    expect(new LlmError({ type: 'auth_error', provider: 'openai', detail: 'x' }).retryable).toBe(false);
  });

  it('carries provider, status and the server-stated wait', () => {
    const e = new LlmError({ type: 'rate_limit', provider: 'anthropic', status: 429, retryAfterMs: 3_000, detail: 'rate_limit_error: slow', endpoint: 'POST /v1/messages' });
    expect(e).toMatchObject({ type: 'rate_limit', provider: 'anthropic', status: 429, retryAfterMs: 3_000, name: 'LlmError' });
    expect(e.message).toBe('anthropic POST /v1/messages → 429 rate_limit_error: slow');
  });

  it('leaves absent optional fields absent (not undefined-valued keys)', () => {
    const e = new LlmError({ type: 'network_error', provider: 'openai', detail: 'x' });
    expect('status' in e).toBe(false);
    expect('retryAfterMs' in e).toBe(false);
  });

  it('is recognised by LlmError.is, and other errors are not', () => {
    expect(LlmError.is(new LlmError({ type: 'unknown', provider: 'p', detail: 'd' }))).toBe(true);
    expect(LlmError.is(new Error('x'))).toBe(false);
    expect(LlmError.is({ type: 'rate_limit', retryable: true })).toBe(false);
    expect(LlmError.is(null)).toBe(false);
  });

  it('is recognised across two copies of the module (a symbol brand, not instanceof)', async () => {
    vi.resetModules();
    const copy = await import('../activities/llm/llm-error');
    expect(copy.LlmError).not.toBe(LlmError); // really a second copy of the class
    const other = new copy.LlmError({ type: 'overloaded', provider: 'anthropic', detail: 'x' });
    expect(LlmError.is(other)).toBe(true);
    expect(copy.LlmError.is(new LlmError({ type: 'overloaded', provider: 'anthropic', detail: 'x' }))).toBe(true);
  });
});

describe('endpointLabel', () => {
  it('keeps the method and path, never the query string or the host', () => {
    expect(endpointLabel('POST', 'https://user:pw@generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse&key=AIzaSECRET')).toBe(
      'POST /v1beta/models/g:streamGenerateContent',
    );
  });
});

describe('redactSecrets', () => {
  it.each([
    ['Incorrect API key provided: sk-proj-abc123def456ghi789', 'sk-proj'],
    // Key-shaped but fake; joined at run time so secret scanners don't take the source for a leak.
    [['key sk-ant-', 'api03-AAAAAAAAAAAAAAAAAAAA-BBBB'].join(''), 'sk-ant'],
    [['AIza', 'SyD-1234567890abcdefghijklmnopqrst failed'].join(''), 'AIza'],
    ['Authorization: Bearer abcdefghijklmnop', 'abcdefghijklmnop'],
  ])('masks %j', (text, secret) => {
    expect(redactSecrets(text)).not.toContain(secret);
  });

  it('leaves ordinary text alone', () => {
    expect(redactSecrets('prompt is too long: 210000 tokens > 200000 maximum')).toBe('prompt is too long: 210000 tokens > 200000 maximum');
  });

  describe('with the configured keys', () => {
    // Shapes no pattern above knows: an Azure OpenAI key (32 hex digits), a Groq key, a
    // token a vLLM server was started with. Joined at run time, as above.
    const KEYS = {
      azure: ['3f9a1c0b7e2d4a6f', '8b5c9d0e1f2a3b4c'].join(''),
      groq: ['gsk_', 'Q7wErTy8UiOp9AsDfGh0JkLzXcVbNm12'].join(''),
      vllm: ['team-a.', 'token~42/xyz'].join(''),
    };

    it.each(Object.entries(KEYS))('masks a %s key that no pattern knows, wherever it stands', (_, key) => {
      const text = `Incorrect API key provided: ${key}. Key ${key}, twice.`;
      expect(redactSecrets(text)).toContain(key); // the patterns alone miss it
      const masked = redactSecrets(text, Object.values(KEYS));
      expect(masked).not.toContain(key);
      expect(masked).toBe('Incorrect API key provided: [redacted]. Key [redacted], twice.');
    });

    it('masks the start of a key that a clipped message cut off', () => {
      const clipped = `${'x'.repeat(40)} ${KEYS.azure.slice(0, 13)}…`;
      expect(redactSecrets(clipped, [KEYS.azure])).toBe(`${'x'.repeat(40)} [redacted]…`);
    });

    it('takes values shorter than 8 characters for the placeholders keyless local servers get, not for secrets', () => {
      expect(redactSecrets('model x not found on ollama', ['x', 'ollama'])).toBe('model x not found on ollama');
    });
  });
});

describe('LlmAbortError', () => {
  it('is an abort, not an LlmError, so nothing can retry it', () => {
    const e = new LlmAbortError('openai', new Error('cancelled'));
    expect(isAbortError(e)).toBe(true);
    expect(LlmError.is(e)).toBe(false);
    expect(e.name).toBe('AbortError');
  });

  it('is not confused with other errors', () => {
    expect(isAbortError(new Error('x'))).toBe(false);
    expect(isAbortError(new LlmError({ type: 'network_error', provider: 'p', detail: 'd' }))).toBe(false);
  });
});
