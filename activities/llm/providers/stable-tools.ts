import type { ToolSpec } from '../../../contracts/messages';

/**
 * The tools in the one order and spelling every request of a session uses: sorted by
 * name, each schema with its object keys sorted. Prompt caches match a request's prefix
 * byte for byte, and the tool definitions come first in it, so a tool list that came out
 * in a different order (or a schema whose keys did) would miss the cache on every step.
 */
export function stableTools(tools: readonly ToolSpec[]): ToolSpec[] {
  return [...tools]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((t) => ({ name: t.name, description: t.description, inputSchema: sortedKeys(t.inputSchema) as Record<string, unknown> }));
}

/** The value with every object's keys in sorted order: one spelling for equal JSON. */
export function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortedKeys((value as Record<string, unknown>)[key]);
  return out;
}
