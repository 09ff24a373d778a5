import { describe, expect, it } from 'vitest';
import { parseGoDurationMs, serverStatedWaitMs } from '../activities/llm/retry-after';

const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);
const iso = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();
const httpDate = (offsetMs: number) => new Date(NOW + offsetMs).toUTCString();
const wait = (headers: Record<string, string | string[]>) => serverStatedWaitMs(headers, NOW);

describe('serverStatedWaitMs', () => {
  it('is undefined when no header states a wait', () => {
    expect(wait({})).toBeUndefined();
    expect(wait({ 'content-type': 'application/json' })).toBeUndefined();
    expect(serverStatedWaitMs(undefined, NOW)).toBeUndefined();
  });

  describe('retry-after', () => {
    it.each([
      ['3', 3_000],
      ['0', 0],
      ['120', 120_000],
      ['1.5', 1_500],
    ])('reads delay-seconds %j as %i ms', (v, ms) => {
      expect(wait({ 'retry-after': v })).toBe(ms);
    });

    it('reads an HTTP date as the time from now until then', () => {
      expect(wait({ 'retry-after': httpDate(10_000) })).toBe(10_000);
    });

    it('reads the obsolete RFC 850 and asctime date forms too', () => {
      expect(wait({ 'retry-after': 'Wednesday, 15-Jan-25 12:00:30 GMT' })).toBe(30_000);
      expect(wait({ 'retry-after': 'Wed Jan 15 12:00:30 2025' })).toBe(30_000);
    });

    it('counts an HTTP date in the past as 0 (already reset), not as garbage', () => {
      expect(wait({ 'retry-after': httpDate(-60_000) })).toBe(0);
    });

    it.each(['soon', '-5', '3 seconds', 'NaN', 'Infinity', '1e3', '0x10', 'Wed, 99 Foo 2025 99:99:99 GMT', '   '])('ignores garbage %j', (v) => {
      expect(wait({ 'retry-after': v })).toBeUndefined();
    });

    it('is found whatever the header name case', () => {
      expect(wait({ 'Retry-After': '4' })).toBe(4_000);
      expect(serverStatedWaitMs(new Headers({ 'Retry-After': '4' }), NOW)).toBe(4_000);
    });
  });

  it('reads retry-after-ms in milliseconds, rounding up', () => {
    expect(wait({ 'retry-after-ms': '250' })).toBe(250);
    expect(wait({ 'retry-after-ms': '250.2' })).toBe(251);
    expect(wait({ 'retry-after-ms': 'later' })).toBeUndefined();
  });

  it('reads x-ratelimit-reset-after in seconds', () => {
    expect(wait({ 'x-ratelimit-reset-after': '7' })).toBe(7_000);
    expect(wait({ 'x-ratelimit-reset-after': '0.25' })).toBe(250);
    expect(wait({ 'x-ratelimit-reset-after': 'x' })).toBeUndefined();
  });

  describe("Anthropic's RFC 3339 reset instants", () => {
    it.each(['anthropic-ratelimit-requests-reset', 'anthropic-ratelimit-input-tokens-reset'])('reads %s as the time until that instant', (name) => {
      expect(wait({ [name]: iso(5_000) })).toBe(5_000);
    });

    it('accepts offsets and sub-millisecond fractions', () => {
      expect(wait({ 'anthropic-ratelimit-requests-reset': '2025-01-15T14:00:05+02:00' })).toBe(5_000);
      expect(wait({ 'anthropic-ratelimit-requests-reset': '2025-01-15T12:00:05.123456789Z' })).toBe(5_123);
    });

    it('counts an instant in the past as 0', () => {
      expect(wait({ 'anthropic-ratelimit-requests-reset': iso(-3_000) })).toBe(0);
    });

    it.each(['tomorrow', '5', '2025-01-15', '2025-13-45T99:00:00Z'])('ignores garbage %j', (v) => {
      expect(wait({ 'anthropic-ratelimit-input-tokens-reset': v })).toBeUndefined();
    });

    it('counts a reset whose bucket ran out', () => {
      expect(wait({ 'anthropic-ratelimit-requests-reset': iso(5_000), 'anthropic-ratelimit-requests-remaining': '0' })).toBe(5_000);
    });

    it('ignores the reset of a bucket that still has room (it rides on every response)', () => {
      expect(wait({ 'anthropic-ratelimit-requests-reset': iso(50_000), 'anthropic-ratelimit-requests-remaining': '49' })).toBeUndefined();
      expect(
        wait({
          'anthropic-ratelimit-requests-reset': iso(50_000),
          'anthropic-ratelimit-requests-remaining': '49',
          'anthropic-ratelimit-input-tokens-reset': iso(8_000),
          'anthropic-ratelimit-input-tokens-remaining': '0',
        }),
      ).toBe(8_000);
    });
  });

  describe("OpenAI's Go-style reset durations", () => {
    it.each(['x-ratelimit-reset-requests', 'x-ratelimit-reset-tokens'])('reads %s', (name) => {
      expect(wait({ [name]: '6m0s' })).toBe(360_000);
    });

    it('ignores the reset of a bucket that still has room', () => {
      expect(wait({ 'x-ratelimit-reset-requests': '6m0s', 'x-ratelimit-remaining-requests': '499' })).toBeUndefined();
      expect(wait({ 'x-ratelimit-reset-tokens': '1.5s', 'x-ratelimit-remaining-tokens': '0' })).toBe(1_500);
    });
  });

  describe('parseGoDurationMs', () => {
    it.each([
      ['6m0s', 360_000],
      ['1.5s', 1_500],
      ['20ms', 20],
      ['1h2m3.5s', 3_723_500],
      ['0s', 0],
      ['0', 0],
      ['500us', 0.5],
      ['500µs', 0.5],
      ['1500000ns', 1.5],
      ['.5s', 500],
      ['2', 2_000],
    ])('reads %j as %d ms', (v, ms) => {
      expect(parseGoDurationMs(v)).toBeCloseTo(ms, 9);
    });

    it.each(['', 's', 'm5', '6 minutes', '-1s', '1d', '1.5.5s', 'ms', '5s garbage'])('rejects %j', (v) => {
      expect(parseGoDurationMs(v)).toBeUndefined();
    });
  });

  describe('which header wins', () => {
    it('is the largest stated wait, because each one is a floor', () => {
      expect(wait({ 'retry-after': '3', 'retry-after-ms': '5000' })).toBe(5_000);
      expect(wait({ 'retry-after': '9', 'retry-after-ms': '5000', 'x-ratelimit-reset-after': '2' })).toBe(9_000);
      expect(wait({ 'retry-after': '1', 'anthropic-ratelimit-input-tokens-reset': iso(12_000) })).toBe(12_000);
      expect(wait({ 'x-ratelimit-reset-requests': '20ms', 'x-ratelimit-reset-tokens': '2s' })).toBe(2_000);
    });

    it('is the largest of repeated values of one header', () => {
      expect(wait({ 'retry-after': ['2', '7'] })).toBe(7_000);
    });

    it('ignores garbage beside a good value instead of failing', () => {
      expect(wait({ 'retry-after': 'garbage', 'retry-after-ms': '1200', 'x-ratelimit-reset-tokens': '??' })).toBe(1_200);
    });
  });
});
