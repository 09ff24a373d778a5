/**
 * Fuzzer of the MCP tool-argument trust boundary: the arguments a model writes for a tool,
 * checked against the JSON Schema an MCP server listed for it. Both sides are outside the
 * worker's trust, and the schema is where a hostile server aims: catastrophic `pattern`s,
 * `$ref` cycles, nesting far deeper than any tool needs, huge `enum`s and `const`s, and
 * `anyOf`/`oneOf`/`not` nested so that checking branches multiplies. The schemas are built
 * from those pieces; the arguments are any JSON, plus values the schemas' own pieces make.
 *
 * Whatever arrives, the worker's check (activities/mcp/check-arguments.ts, the only code that
 * reads a listed schema) answers in bounded time with the arguments accepted or with one
 * error result the model reads, bounded in size: never a throw, which would fail the step,
 * and never a regex of the server's, which could hold the worker for minutes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkMcpArguments } from '../../activities/mcp/check-arguments';
import { assertProperty } from '../support/fuzz';

/** Far above what the checker's step budget costs, far below a stalled worker. */
const MAX_CHECK_MS = 2_000;
/** A refusal's size: 20 issue lines of bounded paths and quotes, and its head and tail. */
const MAX_CONTENT_CHARS = 8 * 1024;

const CATASTROPHIC = ['^(a+)+$', '(a|a)*b', '^(\\w+\\s?)*$', '(x+x+)+y', '^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$'];
const REFS = ['#', '#/properties/a', '#/$defs/node', '#/definitions/x', '#/items', '#/anyOf/0', '#/nope/~1/~0', '#/%zz', 'https://example.com/s.json', '#/properties/a/properties/a'];

function nested(levels: number, leaf: Record<string, unknown>): Record<string, unknown> {
  let schema = leaf;
  for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { a: schema }, required: ['a'] };
  return schema;
}

const leafSchema: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(true, false, {}, { type: 'string' }, { type: ['string', 'null'] }, { type: 'integer', minimum: 0, multipleOf: 3 }, { type: 'number', exclusiveMaximum: 1 }),
  fc.constantFrom(...CATASTROPHIC).map((pattern) => ({ type: 'string', pattern, minLength: 1 })),
  fc.constantFrom(...REFS).map(($ref) => ({ $ref })),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 30 }).map((values) => ({ enum: values })),
  fc.integer({ min: 1, max: 20 }).map((n) => ({ enum: Array.from({ length: n * 1000 }, (_, i) => `v${i}`) })),
  fc.jsonValue({ maxDepth: 2 }).map((value) => ({ const: value })),
  fc.constant({ const: 'c'.repeat(100_000) }),
  fc.jsonValue({ maxDepth: 2 }),
);

const schema: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafSchema,
    fc.record({ type: fc.constant('object'), properties: fc.dictionary(fc.constantFrom('a', 'b', '__proto__', 'constructor', ''), tie('node'), { maxKeys: 3 }), required: fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 3 }), additionalProperties: fc.oneof(fc.boolean(), tie('node')) }, { requiredKeys: ['properties'] }),
    fc.record({ type: fc.constant('object'), patternProperties: fc.constant({ '^(a+)+$': { type: 'string' } }), additionalProperties: fc.constant(false) }),
    fc.record({ type: fc.constant('array'), items: fc.oneof(tie('node'), fc.array(tie('node'), { maxLength: 3 })), prefixItems: fc.array(tie('node'), { maxLength: 2 }), minItems: fc.nat(3), maxItems: fc.nat(5) }, { requiredKeys: ['items'] }),
    fc.array(tie('node'), { minLength: 1, maxLength: 4 }).map((branches) => ({ anyOf: branches })),
    fc.array(tie('node'), { minLength: 1, maxLength: 4 }).map((branches) => ({ oneOf: branches })),
    fc.array(tie('node'), { minLength: 1, maxLength: 4 }).map((branches) => ({ allOf: branches })),
    tie('node').map((inner) => ({ not: inner })),
    fc.record({ $ref: fc.constantFrom(...REFS), $defs: fc.record({ node: tie('node') }), definitions: fc.record({ x: tie('node') }) }),
    fc.tuple(fc.integer({ min: 50, max: 3000 }), leafSchema).map(([levels, leaf]) => nested(levels, leaf as Record<string, unknown>)),
    // Branches that refer back to the root through every level: checking them multiplies.
    fc.integer({ min: 2, max: 6 }).map((n) => ({ type: 'array', items: { anyOf: [...Array.from({ length: n }, () => ({ $ref: '#' })), { const: 0 }] } })),
  ),
})).node;

function deepArray(levels: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

function deepObject(levels: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

const args: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.dictionary(fc.constantFrom('a', 'b', 'c', '__proto__', 'constructor', 'toString', 'x'.repeat(500)), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
  fc.constantFrom(...CATASTROPHIC).map(() => ({ a: `${'a'.repeat(40)}!` })),
  fc.tuple(fc.integer({ min: 1, max: 3000 }), fc.jsonValue({ maxDepth: 1 })).map(([levels, leaf]) => deepArray(levels, leaf)),
  fc.tuple(fc.integer({ min: 1, max: 3000 }), fc.jsonValue({ maxDepth: 1 })).map(([levels, leaf]) => deepObject(levels, leaf)),
  fc.integer({ min: 1000, max: 50_000 }).map((n) => ({ a: Array.from({ length: n }, (_, i) => i) })),
);

describe('MCP tool arguments against listed schemas (fuzz)', () => {
  it('are accepted or refused with one bounded error result in bounded time, whatever the schema and the arguments', async () => {
    await assertProperty(
      400,
      fc.property(schema, args, (listed, given) => {
        const started = performance.now();
        const check = checkMcpArguments('hostile', 'mcp__hostile__tool', listed, given);
        expect(performance.now() - started).toBeLessThan(MAX_CHECK_MS);
        if (check.ok) return;
        expect(check.content).toMatch(/^Tool call rejected: /);
        expect(check.content.length).toBeLessThanOrEqual(MAX_CONTENT_CHARS);
      }),
    );
  });

  it('gives a schema that refers to itself, and the arguments of a catastrophic pattern, an answer within the budget', () => {
    const text = `${'a'.repeat(40)}!`;
    const started = performance.now();
    expect(checkMcpArguments('hostile', 'mcp__hostile__match', { type: 'object', properties: { text: { type: 'string', pattern: '^(a+)+$' } } }, { text })).toEqual({ ok: true });
    expect(checkMcpArguments('hostile', 'mcp__hostile__cyclic', { type: 'object', $ref: '#' }, {})).toMatchObject({ ok: false, content: expect.stringMatching(/cannot be checked \(it nests or refers to itself more than 128 levels deep\)/) });
    const multiplying = { type: 'array', items: { anyOf: [{ $ref: '#' }, { $ref: '#' }, { $ref: '#' }, { const: 0 }] } };
    expect(checkMcpArguments('hostile', 'mcp__hostile__many', multiplying, deepArray(40, 1))).toMatchObject({ ok: false, content: expect.stringMatching(/cannot be checked \(it takes more than 250000 steps\)/) });
    expect(performance.now() - started).toBeLessThan(MAX_CHECK_MS);
  });
});
