import { readJsonFile } from '../../config/json-file';
import { z } from 'zod';
import { ConfigError } from '../../config/config-error';
import type { Usage } from '../../contracts/messages';
import { BUILTIN_PRICES } from './prices';

const usdPerMillion = z.number({ error: 'must be a number of USD per million tokens' }).nonnegative({ error: 'must not be negative' });

const ModelPriceSchema = z
  .object({
    input: usdPerMillion,
    output: usdPerMillion,
    /** A cached input token read; absent: billed as `input`. */
    cacheRead: usdPerMillion.optional(),
    /** A cached input token written; absent: billed as `input`. */
    cacheWrite: usdPerMillion.optional(),
  })
  .strict();
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/** The shape of the built-in table and of AGENT_PRICES_FILE. */
export const PriceFileSchema = z
  .object({
    /** When the prices were read from the providers' pages (YYYY-MM-DD). */
    takenOn: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'must be a date as YYYY-MM-DD' }).optional(),
    models: z.record(z.string(), ModelPriceSchema).superRefine((models, ctx) => {
      for (const key of Object.keys(models)) {
        if (!/^(anthropic|openai|google):\S+$/.test(key)) ctx.addIssue({ code: 'custom', path: [key], message: 'must be provider:model (anthropic, openai or google)' });
      }
    }),
  })
  .strict();
export type PriceFile = z.infer<typeof PriceFileSchema>;

export type PriceTable = ReadonlyMap<string, ModelPrice>;

/**
 * The built-in prices, with the file's entries replacing or adding to them. A bad file is
 * one line naming AGENT_PRICES_FILE and the entry, so the worker refuses to start rather
 * than bill with a half-read table.
 */
export function loadPriceTable(path?: string): PriceTable {
  const table = new Map(Object.entries(BUILTIN_PRICES.models));
  if (path === undefined) return table;
  const json = readJsonFile('AGENT_PRICES_FILE', path);
  const parsed = PriceFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`AGENT_PRICES_FILE: ${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'invalid'} (expected {"models": {"provider:model": {"input": USD, "output": USD, "cacheRead"?: USD, "cacheWrite"?: USD}}}, USD per million tokens)`);
  }
  for (const [model, price] of Object.entries(parsed.data.models)) table.set(model, price);
  return table;
}

export const BUILTIN_PRICE_TABLE: PriceTable = loadPriceTable();

/**
 * A model's price: its own entry, or the entry its dated snapshot belongs to
 * (`claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`, `…-latest`). Nothing looser: a
 * model merely starting like a known one (`gpt-5-pro`) may cost far more, and an unknown
 * cost is shown as unknown rather than guessed.
 */
export function priceOf(table: PriceTable, model: string): ModelPrice | undefined {
  const exact = table.get(model);
  if (exact) return exact;
  const base = /^(.*?)-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/.exec(model)?.[1];
  return base === undefined ? undefined : table.get(base);
}

/**
 * What one LLM call cost in USD, or null when the model has no price. `inputTokens`
 * includes the cached parts (see UsageSchema), so they are taken out of it and billed at
 * their own rates; reasoning is part of the output and billed as output.
 */
export function costOf(table: PriceTable, model: string, usage: Usage): number | null {
  const price = priceOf(table, model);
  if (!price) return null;
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  const uncached = Math.max(0, usage.inputTokens - cacheRead - cacheWrite);
  const micro =
    uncached * price.input + cacheRead * (price.cacheRead ?? price.input) + cacheWrite * (price.cacheWrite ?? price.input) + usage.outputTokens * price.output;
  return micro / 1_000_000;
}
