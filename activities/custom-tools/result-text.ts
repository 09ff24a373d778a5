import type { ToolOutcome } from '../../contracts/tools/tool-outcome';

/**
 * A tool's result as the text the model reads: a string as it is, anything else as JSON.
 * What JSON cannot hold (a function, a symbol, a bigint, a number that is not finite, a
 * cycle, a class instance without `toJSON`) would be dropped or mangled by
 * `JSON.stringify` without a word, so it is refused by its path instead; so is a text past
 * the tool's limit. Either is an error result the model reads, never a failed call.
 */
export function resultOutcome(tool: string, value: unknown, maxChars: number): ToolOutcome {
  const text = typeof value === 'string' ? value : jsonText(value);
  if (typeof text !== 'string') return { code: 'error', content: `The tool "${tool}" ran, but its result was refused: ${text.refused}. Tell the user; the tool must return JSON.` };
  if (text.length > maxChars) {
    return {
      code: 'error',
      content: `The tool "${tool}" ran, but its result was refused: ${text.length} characters, more than its limit of ${maxChars}. Ask for less (a range, a summary, a smaller page).`,
    };
  }
  return { code: 'ok', content: text };
}

function jsonText(value: unknown): string | { refused: string } {
  if (value === undefined) return '';
  const problem = nonJson(value, 'the result', new Set());
  return problem === undefined ? JSON.stringify(value) : { refused: problem };
}

/** `fromToJson`: `value` is what a `toJSON` returned, which JSON.stringify writes as it is, without asking it for its own. */
function nonJson(value: unknown, at: string, open: Set<object>, fromToJson = false): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `${at} is ${value}, which JSON cannot hold`;
  if (typeof value !== 'object') return `${at} is a ${typeof value}, which is not JSON`;
  const toJson = (value as { toJSON?: unknown }).toJSON;
  // A `toJSON` that returns its own object (`return this`) would otherwise be asked again for ever.
  if (typeof toJson === 'function' && !fromToJson) return nonJson(toJson.call(value), at, open, true);
  if (open.has(value)) return `${at} refers to itself`;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return `${at} is a ${value.constructor?.name ?? 'class'} instance, which is not JSON`;
  open.add(value);
  try {
    const entries = Array.isArray(value) ? value.map((v, i) => [`${at}[${i}]`, v] as const) : Object.entries(value).map(([k, v]) => [`${at}.${k}`, v] as const);
    for (const [path, v] of entries) {
      // JSON.stringify drops an undefined property (and writes null in an array): harmless.
      const problem = v === undefined ? undefined : nonJson(v, path, open);
      if (problem !== undefined) return problem;
    }
    return undefined;
  } finally {
    open.delete(value);
  }
}
