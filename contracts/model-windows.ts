import { z } from 'zod';

/** A model's context window (input and output together, in tokens) and the most it may write in one answer. */
export interface ModelWindow {
  contextWindow: number;
  maxOutputTokens: number;
}

export type ModelWindowTable = Readonly<Record<string, ModelWindow>>;

/**
 * The context windows of the providers' known models, by `provider:model`: what the
 * session compacts against when `contextWindow` is not set (workflows/compaction.ts).
 *
 * Written from memory of the providers' model pages as they stood in late 2025: the
 * machines this project is built on have no internet, so the figures could not be
 * checked against the live pages. A wrong or missing entry is corrected without a
 * release through AGENT_MODELS_FILE (ModelWindowsFileSchema), or per session with
 * `--context-window`. Beta long-context modes (Sonnet's 1M) are not assumed: the table
 * holds the window every account gets.
 *
 * The workflow reads this table, so changing an entry changes when a running session
 * compacts: only a new session, or a continued one, should see a new figure. That is
 * why the client passes the window it resolved in the session input, and the table is
 * only the fallback for sessions started without it.
 */
export const MODEL_WINDOWS: ModelWindowTable = {
  'anthropic:claude-opus-4-5': { contextWindow: 200_000, maxOutputTokens: 64_000 },
  'anthropic:claude-opus-4-1': { contextWindow: 200_000, maxOutputTokens: 32_000 },
  'anthropic:claude-opus-4-0': { contextWindow: 200_000, maxOutputTokens: 32_000 },
  // The snapshot of Opus 4 and Sonnet 4 is named without the `-0` (claude-sonnet-4-20250514).
  'anthropic:claude-opus-4': { contextWindow: 200_000, maxOutputTokens: 32_000 },
  'anthropic:claude-sonnet-4-5': { contextWindow: 200_000, maxOutputTokens: 64_000 },
  'anthropic:claude-sonnet-4-0': { contextWindow: 200_000, maxOutputTokens: 64_000 },
  'anthropic:claude-sonnet-4': { contextWindow: 200_000, maxOutputTokens: 64_000 },
  'anthropic:claude-3-7-sonnet': { contextWindow: 200_000, maxOutputTokens: 64_000 },
  'anthropic:claude-haiku-4-5': { contextWindow: 200_000, maxOutputTokens: 64_000 },
  'anthropic:claude-3-5-haiku': { contextWindow: 200_000, maxOutputTokens: 8_192 },
  'anthropic:claude-3-5-sonnet': { contextWindow: 200_000, maxOutputTokens: 8_192 },
  'anthropic:claude-3-haiku': { contextWindow: 200_000, maxOutputTokens: 4_096 },
  'openai:gpt-5': { contextWindow: 400_000, maxOutputTokens: 128_000 },
  'openai:gpt-5-mini': { contextWindow: 400_000, maxOutputTokens: 128_000 },
  'openai:gpt-5-nano': { contextWindow: 400_000, maxOutputTokens: 128_000 },
  'openai:gpt-5.1': { contextWindow: 400_000, maxOutputTokens: 128_000 },
  'openai:gpt-5-chat': { contextWindow: 128_000, maxOutputTokens: 16_384 },
  'openai:gpt-4.1': { contextWindow: 1_047_576, maxOutputTokens: 32_768 },
  'openai:gpt-4.1-mini': { contextWindow: 1_047_576, maxOutputTokens: 32_768 },
  'openai:gpt-4.1-nano': { contextWindow: 1_047_576, maxOutputTokens: 32_768 },
  'openai:gpt-4o': { contextWindow: 128_000, maxOutputTokens: 16_384 },
  'openai:gpt-4o-mini': { contextWindow: 128_000, maxOutputTokens: 16_384 },
  'openai:o1': { contextWindow: 200_000, maxOutputTokens: 100_000 },
  'openai:o3': { contextWindow: 200_000, maxOutputTokens: 100_000 },
  'openai:o3-mini': { contextWindow: 200_000, maxOutputTokens: 100_000 },
  'openai:o4-mini': { contextWindow: 200_000, maxOutputTokens: 100_000 },
  'google:gemini-3-pro-preview': { contextWindow: 1_048_576, maxOutputTokens: 65_536 },
  'google:gemini-2.5-pro': { contextWindow: 1_048_576, maxOutputTokens: 65_536 },
  'google:gemini-2.5-flash': { contextWindow: 1_048_576, maxOutputTokens: 65_536 },
  'google:gemini-2.5-flash-lite': { contextWindow: 1_048_576, maxOutputTokens: 65_536 },
  'google:gemini-2.0-flash': { contextWindow: 1_048_576, maxOutputTokens: 8_192 },
  'google:gemini-2.0-flash-lite': { contextWindow: 1_048_576, maxOutputTokens: 8_192 },
};

const tokenCount = (what: string) => {
  const message = `must be a whole number of tokens (${what})`;
  return z.number({ error: message }).int({ error: message }).positive({ error: message }).max(100_000_000, { error: `must be at most 100000000 tokens (${what})` });
};

/** AGENT_MODELS_FILE: `{ "provider:model": { "contextWindow": N, "maxOutputTokens": N } }`, entries replacing or adding to MODEL_WINDOWS. */
export const ModelWindowsFileSchema = z.record(
  z.string().regex(/^(anthropic|openai|google):\S+$/, { error: 'must be provider:model (anthropic, openai or google)' }),
  z.object({ contextWindow: tokenCount('contextWindow'), maxOutputTokens: tokenCount('maxOutputTokens') }).strict(),
);
export type ModelWindowsFile = z.infer<typeof ModelWindowsFileSchema>;

/**
 * A model's window: its own entry, or the entry its dated snapshot belongs to
 * (`claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`, `…-latest`). Nothing looser: a
 * model merely starting like a known one may have another window, and compacting against
 * a guessed one could send more than the model takes.
 */
export function windowOf(model: string, table: ModelWindowTable = MODEL_WINDOWS): ModelWindow | undefined {
  const exact = table[model];
  if (exact) return exact;
  const base = /^(.*?)-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/.exec(model)?.[1];
  return base === undefined ? undefined : table[base];
}

/**
 * The window a session compacts against: its own setting, else the smallest known window of
 * its model and its fallbacks (a step may go to any of them, docs/fallback.md; a model
 * without an entry is left out); null when none is known.
 */
export function sessionContextWindow(config: { model: string; fallbacks?: readonly string[] | undefined; contextWindow?: number | undefined }): number | null {
  return config.contextWindow ?? chainWindow([config.model, ...(config.fallbacks ?? [])]) ?? null;
}

/** The smallest context window among these models' known entries; undefined when the table knows none of them. */
export function chainWindow(models: readonly string[], table: ModelWindowTable = MODEL_WINDOWS): number | undefined {
  const known = models.flatMap((model) => windowOf(model, table)?.contextWindow ?? []);
  return known.length === 0 ? undefined : Math.min(...known);
}
