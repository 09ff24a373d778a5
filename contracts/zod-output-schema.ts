import { z } from 'zod';
import { describeIssues } from './api';
import { OutputSchemaSchema, type OutputSchema } from './structured-output';

/**
 * A zod schema of an answer as the JSON Schema a session is given (structured output):
 * converted once, where it is written (defineAgent's `output`, a message's `outputSchema`
 * in the client), because a session's input and its messages carry data and every
 * provider is sent JSON Schema. Only an object schema is taken, as for `--output-schema`:
 * it is what the providers' strict modes and Anthropic's tool input accept at the root.
 */

/** A zod schema that cannot be a session's output schema; the message says why, in words a definition's refusal can quote. */
export class OutputSchemaConversionError extends Error {
  override name = 'OutputSchemaConversionError';
}

export function outputSchemaOfZod(schema: z.ZodType): OutputSchema {
  // Duck-typed, not `instanceof`: the user's zod may be another copy than this package's.
  if ((schema as { _zod?: { def?: { type?: unknown } } } | null)?._zod?.def?.type !== 'object') {
    throw new OutputSchemaConversionError('must be a zod object schema (z.object({ … })), as structured output takes an object at the root');
  }
  let converted: Record<string, unknown>;
  try {
    converted = z.toJSONSchema(schema);
  } catch (error) {
    // zod names what JSON Schema cannot say (a date, a transform) in one sentence.
    throw new OutputSchemaConversionError(`cannot be sent as JSON Schema: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = OutputSchemaSchema.safeParse(converted);
  if (!parsed.success) throw new OutputSchemaConversionError(describeIssues(parsed.error));
  return parsed.data;
}

/** Tells a zod schema from a JSON Schema given in its place: a zod schema carries its definition under `_zod`. */
export function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === 'object' && value !== null && '_zod' in value;
}
