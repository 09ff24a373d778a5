import { describe, expect, it } from 'vitest';
import { resultOutcome } from '../activities/custom-tools/result-text';

describe("a custom tool's result as the text the model reads", () => {
  it('writes what a toJSON returns, as JSON.stringify does', () => {
    const when = new Date(Date.UTC(2026, 11, 2));
    expect(resultOutcome('t', { when }, 1_000)).toEqual({ code: 'ok', content: JSON.stringify({ when }) });
  });

  it('refuses a toJSON that returns its own object instead of asking it again for ever', () => {
    const selfish = { a: 1, toJSON() { return this; } };
    expect(resultOutcome('t', selfish, 1_000)).toEqual({ code: 'error', content: 'The tool "t" ran, but its result was refused: the result.toJSON is a function, which is not JSON. Tell the user; the tool must return JSON.' });
  });
});
