import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { ConfigError } from '../config/config-error';
import { messageOf, OutputTypeError, typedOutput } from '../client/message-output';
import { sendAndWait, type SessionHandle, type TurnResult } from '../client/sessions';
import { sessionOptionsFrom } from '../client/commands/session-options';
import { sendCommand } from '../client/commands/send';
import { parseClientEnv } from '../client/config';
import { agentSessionSettings, defineAgent } from '../contracts/agents/agent-definition';
import { defineTool } from '../contracts/tools/custom-tool';
import { runEntry } from './support/cli';

// Nothing listens here: a command that got as far as the server would fail with exit 1
// and "cannot reach the Temporal server", so exit 2 proves the refusal came first.
const NO_SERVER = { TEMPORAL_ADDRESS: 'localhost:1' };
const cli = (args: string[]) => runEntry('client/main.ts', args, NO_SERVER);
const context = { env: parseClientEnv(NO_SERVER), signal: new AbortController().signal };

const Order = z.object({ id: z.number().int(), status: z.enum(['open', 'shipped']), note: z.string().optional() });
const orders = defineAgent({ name: 'orders', model: 'openai:gpt-4o-mini', output: Order });

const dir = mkdtempSync(path.join(tmpdir(), 'output-schema-'));
const file = (name: string, text: string) => {
  const at = path.join(dir, name);
  writeFileSync(at, text);
  return at;
};
const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
const GOOD = file('good.json', JSON.stringify(SCHEMA));
const MISSING = path.join(dir, 'no-such.json');
const NOT_JSON = file('not-json.json', '{"type": "object",');
const AN_ARRAY = file('array.json', JSON.stringify({ type: 'array', items: { type: 'string' } }));

describe("defineAgent's output", () => {
  it("is the agent's zod schema, kept, and its JSON Schema is the session's outputSchema", () => {
    expect(orders.output).toBe(Order);
    const schema = agentSessionSettings(orders).outputSchema;
    expect(schema).toEqual(orders.settings.outputSchema);
    expect(schema).toMatchObject({
      type: 'object',
      properties: { id: { type: 'integer' }, status: { enum: ['open', 'shipped'] }, note: { type: 'string' } },
      required: ['id', 'status'],
      additionalProperties: false,
    });
  });

  it.each([
    ['a schema that is not an object', { output: z.array(z.string()) }, 'agent "orders": output: must be a zod object schema (z.object({ … })), as structured output takes an object at the root'],
    ['a schema JSON Schema cannot say', { output: z.object({ when: z.date() }) }, 'agent "orders": output: cannot be sent as JSON Schema: Date cannot be represented in JSON Schema'],
    ['output and settings.outputSchema both', { output: Order, settings: { outputSchema: SCHEMA } }, "agent \"orders\": output: and settings.outputSchema both give the answer's schema; give one of them"],
  ])('refuses %s in one line naming the agent', (_, config, message) => {
    expect(() => defineAgent({ name: 'orders', model: 'openai:gpt-4o-mini', ...config } as never)).toThrow(message);
  });
});

describe('final_answer', () => {
  it("is refused as a custom tool's name: Anthropic's structured answer is a call of it", () => {
    expect(() => defineTool({ name: 'final_answer', description: 'd', input: z.object({}), sideEffects: false, run: () => 'x' })).toThrow(
      'defineTool "final_answer": name: is reserved for structured output\'s answer (docs/structured-output.md)',
    );
  });
});

describe('--output-schema and --output-retries', () => {
  it('reads the schema file into the session options', () => {
    expect(sessionOptionsFrom({ 'output-schema': GOOD, 'output-retries': '4' }, parseClientEnv({}))).toMatchObject({ outputSchema: SCHEMA, outputRetries: 4 });
  });

  it.each([
    ['a schema file that cannot be read', '--output-schema', MISSING, `--output-schema cannot read ${JSON.stringify(MISSING)}: ENOENT: no such file or directory`],
    ['a schema file that is not JSON', '--output-schema', NOT_JSON, `--output-schema ${JSON.stringify(NOT_JSON)} is not JSON (at position 18)`],
    ['a schema file whose root is not an object schema', '--output-schema', AN_ARRAY, `--output-schema ${JSON.stringify(AN_ARRAY)}: must be a JSON Schema whose root is an object schema ({"type": "object", ...})`],
    ['more repairs than allowed', '--output-retries', '11', '--output-retries must be a whole number from 0 to 10, got "11"'],
  ])('%s is refused by start, run and send in one line naming the flag, before connecting', async (_, flag, value, line) => {
    const name = flag.slice(2) as 'output-schema' | 'output-retries';
    expect(() => sessionOptionsFrom({ [name]: value }, parseClientEnv({}))).toThrow(new ConfigError(line));
    if (name === 'output-schema') await expect(sendCommand.run(['session-x', 'hi', flag, value], context)).rejects.toThrow(new ConfigError(line));
  });

  it('is said by the CLI in that one line, exit code 2, never a stack', async () => {
    const result = await cli(['send', 'session-x', 'hi', '--output-schema', MISSING]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toEqual([`client: --output-schema cannot read ${JSON.stringify(MISSING)}: ENOENT: no such file or directory`]);
  });
});

describe("a message's outputSchema in the library", () => {
  it('is sent as JSON Schema, whether given as one or as a zod object schema', () => {
    expect(messageOf('hi', { outputSchema: SCHEMA })).toEqual({ text: 'hi', outputSchema: SCHEMA });
    expect(messageOf('hi', { outputSchema: Order }).outputSchema).toEqual(orders.settings.outputSchema);
    expect(messageOf('hi')).toEqual({ text: 'hi' });
  });

  it.each([
    ['a zod schema that is not an object', z.string(), 'outputSchema: must be a zod object schema'],
    ['a JSON Schema that is not an object schema', { type: 'string' }, 'outputSchema: must be a JSON Schema whose root is an object schema'],
  ])('refuses %s as a ConfigError naming outputSchema', (_, outputSchema, message) => {
    expect(() => messageOf('hi', { outputSchema: outputSchema as never })).toThrow(ConfigError);
    expect(() => messageOf('hi', { outputSchema: outputSchema as never })).toThrow(message);
  });

  it("types the value by the zod schema or the agent's output, checked by it", () => {
    expect(typedOutput({ agent: orders }, { id: 7, status: 'shipped' })).toEqual({ id: 7, status: 'shipped' });
    expect(typedOutput({ outputSchema: Order }, undefined)).toBeUndefined();
    expect(typedOutput({ outputSchema: SCHEMA }, { any: 'thing' })).toEqual({ any: 'thing' });
    // The message's own JSON Schema wins over the agent's zod output: the answer was asked for in it.
    expect(typedOutput({ agent: orders, outputSchema: SCHEMA }, { any: 'thing' })).toEqual({ any: 'thing' });
    // A refinement JSON Schema cannot say: the session took the value, its zod type does not.
    const Positive = z.object({ n: z.number().refine((n) => n > 0, 'must be positive') });
    expect(() => typedOutput({ outputSchema: Positive }, { n: -1 })).toThrow(OutputTypeError);
    expect(() => typedOutput({ outputSchema: Positive }, { n: -1 })).toThrow("the answer matched the session's JSON Schema but not the zod schema it is typed by: n: must be positive");
  });

  it("sendAndWait's result is typed by the agent or the zod schema, and unknown by a JSON Schema (checked by tsc)", () => {
    const handle = undefined as unknown as SessionHandle;
    type OrderValue = z.output<typeof Order>;
    // Types only: nothing is called.
    const _typed = () => [sendAndWait(handle, 'x', { agent: orders }), sendAndWait(handle, 'x', { outputSchema: Order })] as const;
    expectTypeOf<Awaited<ReturnType<typeof _typed>[0]>>().toEqualTypeOf<TurnResult<OrderValue>>();
    expectTypeOf<Awaited<ReturnType<typeof _typed>[1]>['output']>().toEqualTypeOf<OrderValue | undefined>();
    const _untyped = () => [sendAndWait(handle, 'x', { outputSchema: SCHEMA }), sendAndWait(handle, 'x')] as const;
    expectTypeOf<Awaited<ReturnType<typeof _untyped>[0]>['output']>().toEqualTypeOf<unknown>();
    expectTypeOf<Awaited<ReturnType<typeof _untyped>[1]>['output']>().toEqualTypeOf<unknown>();
  });
});
