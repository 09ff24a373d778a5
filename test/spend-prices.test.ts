import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_PRICE_TABLE, costOf, loadPriceTable, priceOf } from '../activities/llm/price-table';
import { BUILTIN_PRICES } from '../activities/llm/prices';
import { spendBeyond, spendOf } from '../contracts/spend';
import type { SessionEvent } from '../contracts/session-log';
import { runEntry } from './support/cli';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'prices-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const file = async (name: string, content: string) => {
  const p = path.join(dir, name);
  await writeFile(p, content);
  return p;
};

describe('the price table', () => {
  it('says when its prices were taken', () => {
    expect(BUILTIN_PRICES.takenOn).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('prices a call by its uncached input, cache reads and writes at their own rates, and output (reasoning included)', () => {
    // claude-sonnet-4-5: 3 in, 15 out, 0.30 cache read, 3.75 cache write per million.
    const cost = costOf(BUILTIN_PRICE_TABLE, 'anthropic:claude-sonnet-4-5', {
      inputTokens: 1_000_000,
      outputTokens: 100_000,
      cacheReadTokens: 600_000,
      cacheWriteTokens: 100_000,
      reasoningTokens: 50_000,
    });
    expect(cost).toBeCloseTo(0.3 * 3 + 0.6 * 0.3 + 0.1 * 3.75 + 0.1 * 15, 10);
  });

  it("finds a dated snapshot under its model's entry, and nothing merely starting like a known model", () => {
    expect(priceOf(BUILTIN_PRICE_TABLE, 'anthropic:claude-sonnet-4-5-20250929')).toEqual(priceOf(BUILTIN_PRICE_TABLE, 'anthropic:claude-sonnet-4-5'));
    expect(priceOf(BUILTIN_PRICE_TABLE, 'anthropic:claude-sonnet-4-20250514')).toBeDefined();
    expect(priceOf(BUILTIN_PRICE_TABLE, 'openai:gpt-4.1-2025-04-14')).toEqual(priceOf(BUILTIN_PRICE_TABLE, 'openai:gpt-4.1'));
    expect(priceOf(BUILTIN_PRICE_TABLE, 'openai:gpt-4o-mini')).not.toEqual(priceOf(BUILTIN_PRICE_TABLE, 'openai:gpt-4o'));
    expect(priceOf(BUILTIN_PRICE_TABLE, 'openai:gpt-5-pro')).toBeUndefined();
  });

  it('costs an unknown model null, never 0', () => {
    expect(costOf(BUILTIN_PRICE_TABLE, 'openai:echo', { inputTokens: 10, outputTokens: 10 })).toBeNull();
  });

  it('AGENT_PRICES_FILE replaces and adds entries, and keeps the rest', async () => {
    const table = loadPriceTable(
      await file('ok.json', JSON.stringify({ takenOn: '2026-11-30', models: { 'anthropic:claude-sonnet-4-5': { input: 1, output: 2 }, 'openai:my-local': { input: 0, output: 0 } } })),
    );
    expect(costOf(table, 'anthropic:claude-sonnet-4-5', { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 500_000 })).toBe(3);
    expect(costOf(table, 'openai:my-local', { inputTokens: 5, outputTokens: 5 })).toBe(0);
    expect(priceOf(table, 'openai:gpt-5')).toEqual(BUILTIN_PRICES.models['openai:gpt-5']);
  });

  it.each([
    ['missing.json', undefined, /^AGENT_PRICES_FILE: cannot read ".*missing\.json": ENOENT: no such file or directory$/],
    ['garbage.json', '{ nope', /^AGENT_PRICES_FILE: ".*garbage\.json" is not JSON$/],
    ['negative.json', JSON.stringify({ models: { 'openai:x': { input: -1, output: 1 } } }), /^AGENT_PRICES_FILE: models\.openai:x\.input: must not be negative \(expected /],
    ['provider.json', JSON.stringify({ models: { 'mistral:x': { input: 1, output: 1 } } }), /^AGENT_PRICES_FILE: models\.mistral:x: must be provider:model/],
    ['typo.json', JSON.stringify({ models: { 'openai:x': { input: 1, ouput: 1 } } }), /^AGENT_PRICES_FILE: models\.openai:x\.output: must be a number of USD per million tokens/],
  ])('refuses %s in one line naming AGENT_PRICES_FILE', async (name, content, expected) => {
    const p = content === undefined ? path.join(dir, name) : await file(name, content);
    let message = '';
    try {
      loadPriceTable(p);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(expected);
    expect(message).not.toContain('\n');
  });
});

describe('the spend of a log', () => {
  const assistant = (seq: number, costUsd: number | null | undefined, inputTokens = 100): SessionEvent => ({
    type: 'assistant',
    seq,
    at: 0,
    turn: 1,
    step: seq,
    message: { role: 'assistant', text: '', toolCalls: [], stopReason: 'end_turn', usage: { inputTokens, outputTokens: 10 }, ...(costUsd === undefined ? {} : { costUsd }) },
  });

  it('sums tokens and USD, and is unknown once one call is', () => {
    expect(spendOf([assistant(0, 0.25), assistant(1, 0.5)])).toMatchObject({ inputTokens: 200, outputTokens: 20, costUsd: 0.75 });
    expect(spendOf([assistant(0, 0.25), assistant(1, null), assistant(2, 0.5)]).costUsd).toBeNull();
    expect(spendOf([assistant(0, undefined)]).costUsd).toBeNull();
  });

  it('carries what a fork source spent beyond the cut', () => {
    const whole = spendOf([assistant(0, 0.25), assistant(1, 0.5)]);
    const cut = spendOf([assistant(0, 0.25)]);
    const carried = spendBeyond(whole, cut);
    expect(carried).toMatchObject({ inputTokens: 100, costUsd: 0.5 });
    expect(spendOf([assistant(0, 0.25)], carried)).toEqual(whole);
  });
});

describe('the worker with AGENT_PRICES_FILE', () => {
  it('stops before connecting, in one line naming the variable, when the file is bad', async () => {
    const bad = await file('worker-bad.json', JSON.stringify({ models: { 'openai:x': { input: 'cheap', output: 1 } } }));
    // Nothing listens there: the worker must fail on the file before it tries.
    const result = await runEntry('worker/main.ts', [], { AGENT_PRICES_FILE: bad, TEMPORAL_ADDRESS: '127.0.0.1:1' }, 60_000);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(/^worker: AGENT_PRICES_FILE: models\.openai:x\.input: must be a number of USD per million tokens \(expected .*\)$/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});
