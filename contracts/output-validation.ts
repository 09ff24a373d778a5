import { z } from 'zod';
import { OUTPUT_ERRORS, type OutputSpec } from './structured-output';

/**
 * Checks a turn's final answer against its output schema (contracts/structured-output.ts),
 * in the workflow: the answer is the model's text, parsed as JSON and validated with zod's
 * own reading of the JSON Schema. Pure and deterministic (no clock, no I/O, the same
 * messages on every replay), so the workflow sandbox runs it and the verdict is the same
 * each time the history is replayed.
 */

export type OutputVerdict = { ok: true; value: unknown } | { ok: false; errors: string[] };

/**
 * The check of one schema, built once: a turn checks every answer of its steps with the
 * same one. The schema was accepted by OutputSchemaSchema, which proved zod can read it.
 */
export function outputValidator(spec: OutputSpec): (text: string) => OutputVerdict {
  const schema = z.fromJSONSchema(spec.schema as Parameters<typeof z.fromJSONSchema>[0]);
  return (text) => {
    const parsed = parseJson(text);
    if (!parsed.ok) return parsed;
    const checked = schema.safeParse(parsed.value);
    // The value as the model wrote it: zod's output could fill in defaults or drop keys,
    // and the turn's result is the answer that was proven valid, not a rewrite of it.
    if (checked.success) return { ok: true, value: parsed.value };
    return { ok: false, errors: bounded(checked.error.issues.map((issue) => `${pathOf(issue.path)}: ${issue.message}`)) };
  };
}

/** `outputValidator(spec)(text)`, for one answer. */
export function validateOutput(spec: OutputSpec, text: string): OutputVerdict {
  return outputValidator(spec)(text);
}

/**
 * Not JSON: one error naming where it breaks, when the engine says. Only the position is
 * taken from its message, whose wording differs between Node versions (and may quote the
 * text); the position does not.
 */
function parseJson(text: string): OutputVerdict {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    const position = /position (\d+)/.exec(message)?.[1];
    const where = position !== undefined ? ` at character ${position}` : /end of JSON/.test(message) ? `: it ends after character ${text.length}, before the value does` : '';
    return { ok: false, errors: [`(root): the answer is not valid JSON${where}; answer with the JSON value only, without any other text`] };
  }
}

/** `items[2].name`, or `(root)` for the value itself. */
function pathOf(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join('');
}

/** At most OUTPUT_ERRORS.max errors of OUTPUT_ERRORS.chars each; the last line counts what was left out. */
function bounded(errors: string[]): string[] {
  const cut = (line: string) => (line.length <= OUTPUT_ERRORS.chars ? line : `${line.slice(0, OUTPUT_ERRORS.chars - 1)}…`);
  if (errors.length <= OUTPUT_ERRORS.max) return errors.map(cut);
  const kept = errors.slice(0, OUTPUT_ERRORS.max - 1).map(cut);
  return [...kept, `… and ${errors.length - kept.length} more errors`];
}
