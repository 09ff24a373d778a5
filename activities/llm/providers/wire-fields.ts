import { z } from 'zod';
import { isPlainObject, tokenCount } from './assistant-message';

/*
 * The pieces every provider's chunk schema is built of. A stream is read as leniently as
 * providers and the servers that copy them write it: a field of the wrong type reads as
 * absent (never as a failed chunk, which would lose the rest of it), and a field the
 * adapter does not read is dropped unread, whatever a provider adds.
 */

/**
 * A field that may be missing or null (as providers send what they have not got), or of
 * another type, which reads as missing. Read it with `!= null`, as vercel/ai does: a
 * null passes as itself, where turning it into `undefined` would cost a step per field,
 * and a wrong type takes the slow path of a caught failure, which only garbage pays.
 */
export function optional<T extends z.ZodType>(schema: T) {
  return schema.nullish().catch(undefined);
}

/**
 * An object of lenient fields: a missing one reads as one that carries none of them (the
 * fast way: parsed as `{}`), anything else that is no object too (the slow way).
 */
export function fields<S extends z.ZodRawShape>(shape: S) {
  const schema = z.object(shape);
  // Every field is lenient, so `{}` is valid input whatever the shape: TypeScript cannot see that.
  const empty = {} as z.input<typeof schema>;
  return schema.prefault(empty).catch(() => schema.parse(empty));
}

/** A wire field that must be a string; anything else is none. (`String()` of `{"toString": 1}` throws.) */
export const wireText = z.string().prefault('').catch('');

/** A model name as a stream sends it; anything but a non-empty string is no name. */
export const modelName = optional(z.string().min(1));

/** A field read as it came, whatever it is (or missing). */
export const anyValue = z.unknown().optional();

/** A token count that is always read: absent, null or garbage counts 0. */
export const count = z.unknown().optional().transform(tokenCount);

/** A token count that replaces an earlier one only when the chunk carries it (not absent, not null). */
export const countIfSent = z
  .unknown()
  .transform((v) => (v === null ? undefined : tokenCount(v)))
  .optional();

/** A JSON object kept exactly as sent (tool arguments): a parse would copy it and could change it. */
export const jsonObject = z.custom<Record<string, unknown>>(isPlainObject);
