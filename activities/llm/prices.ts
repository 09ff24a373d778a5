import type { PriceFile } from './price-table';

/**
 * The built-in price table: USD per million tokens, by `provider:model`.
 *
 * Written from the providers' published price pages as they stood on `takenOn`. The
 * machines this project is built on have no internet, so the numbers could not be
 * checked against the live pages when they were written: a team that pays list prices
 * should compare them with the pages, and one with negotiated prices sets its own with
 * AGENT_PRICES_FILE (same shape; its entries replace or add to these).
 *
 * `cacheRead` and `cacheWrite` are what a cached input token costs instead of `input`
 * (Anthropic's 5-minute cache writes; OpenAI and Gemini bill no writes). Long-context
 * surcharges (Sonnet and Gemini Pro above 200k input tokens) are not modelled: such a
 * call is priced at the base rate, so it reads low.
 */
export const BUILTIN_PRICES: PriceFile = {
  takenOn: '2025-10-15',
  models: {
    'anthropic:claude-opus-4-5': { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
    'anthropic:claude-opus-4-1': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
    'anthropic:claude-opus-4-0': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
    // The snapshot of Opus 4 and Sonnet 4 is named without the `-0` (claude-sonnet-4-20250514).
    'anthropic:claude-opus-4': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
    'anthropic:claude-sonnet-4-5': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    'anthropic:claude-sonnet-4-0': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    'anthropic:claude-sonnet-4': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    'anthropic:claude-3-7-sonnet': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    'anthropic:claude-haiku-4-5': { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
    'anthropic:claude-3-5-haiku': { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
    'openai:gpt-5': { input: 1.25, output: 10, cacheRead: 0.125 },
    'openai:gpt-5-mini': { input: 0.25, output: 2, cacheRead: 0.025 },
    'openai:gpt-5-nano': { input: 0.05, output: 0.4, cacheRead: 0.005 },
    'openai:gpt-4.1': { input: 2, output: 8, cacheRead: 0.5 },
    'openai:gpt-4.1-mini': { input: 0.4, output: 1.6, cacheRead: 0.1 },
    'openai:gpt-4.1-nano': { input: 0.1, output: 0.4, cacheRead: 0.025 },
    'openai:gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25 },
    'openai:gpt-4o-mini': { input: 0.15, output: 0.6, cacheRead: 0.075 },
    'openai:o3': { input: 2, output: 8, cacheRead: 0.5 },
    'openai:o4-mini': { input: 1.1, output: 4.4, cacheRead: 0.275 },
    'google:gemini-2.5-pro': { input: 1.25, output: 10, cacheRead: 0.31 },
    'google:gemini-2.5-flash': { input: 0.3, output: 2.5, cacheRead: 0.075 },
    'google:gemini-2.5-flash-lite': { input: 0.1, output: 0.4, cacheRead: 0.025 },
    'google:gemini-3-pro-preview': { input: 2, output: 12, cacheRead: 0.2 },
  },
};
