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
