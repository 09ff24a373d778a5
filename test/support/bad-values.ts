/**
 * Values a caller past the client's own types could send in place of a field's value, for
 * the fuzzers of the session's input and Updates. Each generator yields only values its
 * field must refuse, so a property can demand a refusal of every one.
 */
import fc from 'fast-check';
import { DEFAULT_RETRY_POLICY, RETRY_LIMITS } from '../../contracts/retry-policy';

/** Keys an object must not be fooled by: they mean something to JavaScript itself. */
export const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'] as const;

/** `{"a":{"a":…}}` this deep: JSON allows it, a recursive walk may not. */
const deeplyNested = fc.integer({ min: 50, max: 2_000 }).map((depth) => {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
});

/** Strings that look like numbers, or like nothing: what a form or a shell passes on. */
const numberLikeStrings = fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e12', '0x10', '1_000', '', ' ', '12abc', 'null', 'undefined', 'true');

const objects = fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }), deeplyNested);
const arrays = fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 });

/** Anything but a number (JSON has no NaN; the pure layer sends it too). */
export const notANumber = fc.oneof(numberLikeStrings, fc.boolean(), fc.constant(null), fc.constant(Number.NaN), arrays, objects);
export const notAString = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), arrays, objects);
export const notABoolean = fc.oneof(fc.constantFrom('true', 'false', 'yes', '1', ''), fc.constantFrom(0, 1), fc.constant(null), arrays, objects);
export const notAnObject = fc.oneof(fc.integer(), numberLikeStrings, fc.boolean(), fc.constant(null), arrays);
export const notAnArray = fc.oneof(fc.integer(), numberLikeStrings, fc.boolean(), fc.constant(null), objects);

/** A string past `max` characters, by a little or by a lot. */
export const tooLong = (max: number) => fc.integer({ min: max + 1, max: max + 3 * max }).map((n) => 'x'.repeat(n));

/** Wrong for a whole number within [min, max]: out of range, huge, fractional or not a number. */
export function badInteger(min: number, max: number) {
  return fc.oneof(
    fc.integer({ min: Number.MIN_SAFE_INTEGER, max: min - 1 }),
    fc.integer({ min: max + 1, max: Number.MAX_SAFE_INTEGER }),
    fc.constantFrom(max + 1, 1e12 + 1, 1e21, Number.MAX_VALUE, -1e12).filter((v) => v > max || v < min),
    // Below 2^40, where v + 0.5 is still a fraction in floating point.
    fc.integer({ min, max: Math.min(max - 1, 2 ** 40) }).map((v) => v + 0.5),
    notANumber,
  );
}

/** Wrong for a number from `min` to `max`, fractions allowed; each end is in the range unless `excluded` says so. */
export function badFraction(min: number, max: number, excluded: { min?: boolean; max?: boolean } = {}) {
  return fc.oneof(
    fc.double({ max: min, maxExcluded: !excluded.min, noNaN: true, noDefaultInfinity: true }),
    fc.double({ min: max, minExcluded: !excluded.max, noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(1e12, -1e12, Number.MAX_VALUE).filter((v) => v > max || v < min),
    notANumber,
  );
}

/** A key no schema of ours has: random, or one that means something to JavaScript. */
export const unknownKey = (known: readonly string[]) =>
  fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), fc.stringMatching(/^[A-Za-z_$][A-Za-z0-9_$]{0,30}$/)).filter((k) => !known.includes(k));

/**
 * `value` with `key` set as an own property, as JSON.parse makes it: an object literal's
 * `__proto__: x` would set the prototype instead, which no payload can.
 */
export function withKey(value: Record<string, unknown>, key: string, entry: unknown): Record<string, unknown> {
  const copy = { ...value };
  Object.defineProperty(copy, key, { value: entry, enumerable: true, writable: true, configurable: true });
  return copy;
}

const retryField = fc.constantFrom(...(Object.keys(RETRY_LIMITS) as (keyof typeof RETRY_LIMITS)[]));

/** A retry policy (`retryPolicy` of the input, `setRetryPolicy`) with a field out of its bounds, or no policy at all. */
export const badRetryPolicy = fc.oneof(
  notAnObject.filter((v) => v !== null),
  retryField.chain((k) => badInteger(RETRY_LIMITS[k].min, RETRY_LIMITS[k].max).map((v) => ({ ...DEFAULT_RETRY_POLICY, [k]: v }))),
  fc.constant({ ...DEFAULT_RETRY_POLICY, baseDelayMs: 2_000, maxDelayMs: 1_000 }),
);
