import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { forkSession, readLog, startSession } from '../client/sessions';
import { awaitTurnUpdate, parseOrThrow, SendMessageSchema, SessionRunInputSchema, sendUpdate, stateQuery, type SessionInput, type TurnOutcome } from '../contracts/api';
import { repairRequest } from '../contracts/conversation';
import { validateOutput } from '../contracts/output-validation';
import { SessionEventSchema, type SessionEvent } from '../contracts/session-log';
import { CARRIED_OUTPUT_BYTES, OUTPUT_ERRORS, type OutputSchema } from '../contracts/structured-output';
import { useAgentHarness } from './support/agent-harness';
import { eventually } from './support/eventually';

/**
 * Structured output end to end (issue #28): a real worker on the shared dev server, the
 * scripted LLM answering in each provider's structured-output wire form. The workflow
 * validates the answer, sends the model its errors while repairs are left, and fails the
 * turn `output_invalid` after that; the value is in the turn's outcome and in the log.
 */

const h = useAgentHarness();

const CITY: OutputSchema = {
  type: 'object',
  properties: { city: { type: 'string' }, population: { type: 'integer', minimum: 0 } },
  required: ['city', 'population'],
  additionalProperties: false,
};
const VERDICT: OutputSchema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false };

const VALID = { city: 'Zürich', population: 443_037 };
const NEGATIVE = { city: 'Zürich', population: -5 };
const errorsOf = (schema: OutputSchema, value: unknown) => {
  const verdict = validateOutput({ schema }, JSON.stringify(value));
  if (verdict.ok) throw new Error('the scripted value was meant to be invalid');
  return verdict.errors;
};

let n = 0;
const unique = (name: string) => `${name}-${++n}-${Date.now()}`;
const start = (input: Partial<SessionInput> & { model: string }) => startSession(h().client, h().env, { idleTimeoutMs: 120_000, ...input });
type Session = Awaited<ReturnType<typeof start>>;
const send = (session: Session, text: string, outputSchema?: OutputSchema): Promise<TurnOutcome> =>
  session.executeUpdate(sendUpdate, { args: [{ text, ...(outputSchema ? { outputSchema } : {}) }] });
const requests = (model: string) => h().llm.requests({ model });
const sentText = (model: string, i: number) => JSON.stringify(requests(model)[i]?.body);
const ofType = <T extends SessionEvent['type']>(log: SessionEvent[], type: T) => log.filter((e): e is Extract<SessionEvent, { type: T }> => e.type === type);

const PROVIDERS = [
  ['anthropic', 'answer_tool'],
  ['openai', 'json_schema'],
  ['google', 'response_schema'],
] as const;

describe.each(PROVIDERS)('%s: structured output', (provider, mode) => {
  it('returns a valid first answer as the turn\'s output, in the outcome and in turn/end, the schema sent natively and shown in the settings', async () => {
    const model = unique(`so-valid-${provider}`);
    h().llm.script(model, { kind: 'json', value: VALID });
    const session = await start({ model: `${provider}:${model}`, outputSchema: CITY });

    expect(await send(session, 'the largest Swiss city?')).toEqual({ turn: 1, status: 'completed', reason: 'answered', output: VALID });
    const log = await readLog(session);
    expect(ofType(log, 'turn/start')[0]?.output).toEqual({ schema: CITY });
    expect(ofType(log, 'turn/end')[0]).toMatchObject({ status: 'completed', reason: 'answered', output: VALID });
    expect(ofType(log, 'output/rejected')).toEqual([]);
    expect(requests(model).map((r) => r.output?.mode)).toEqual([mode]);
    expect(requests(model)[0]?.output?.schema).toMatchObject({ properties: { city: { type: 'string' } } });
    expect((await session.query(stateQuery)).settings).toMatchObject({ outputSchema: CITY, outputRetries: 2 });
  });

  it('repairs an invalid answer on the second try: the repair request carries the errors, both tries are steps', async () => {
    const model = unique(`so-repair-${provider}`);
    h().llm.script(model, { kind: 'json', value: NEGATIVE }, { kind: 'json', value: VALID });
    const session = await start({ model: `${provider}:${model}`, outputSchema: CITY });

    expect(await send(session, 'the largest Swiss city?')).toMatchObject({ status: 'completed', reason: 'answered', output: VALID });
    const errors = errorsOf(CITY, NEGATIVE);
    expect(errors).toEqual(['population: Too small: expected number to be >=0']);
    const log = await readLog(session);
    expect(log.filter((e) => e.type.startsWith('step/') || e.type === 'output/rejected').map((e) => `${e.type} ${'step' in e ? e.step : ''}`)).toEqual([
      'step/start 1',
      'step/end 1',
      'output/rejected 1',
      'step/start 2',
      'step/end 2',
    ]);
    expect(ofType(log, 'output/rejected')[0]?.errors).toEqual(errors);
    expect(requests(model).map((r) => r.output?.mode)).toEqual([mode, mode]);
    expect(sentText(model, 0)).not.toContain('did not match');
    expect(sentText(model, 1)).toContain(JSON.stringify(repairRequest(errors)).slice(1, -1));
  });

  it('fails output_invalid with the last errors after the answer was invalid three times (two repair requests)', async () => {
    const model = unique(`so-invalid-${provider}`);
    h().llm.script(model, { kind: 'json', value: NEGATIVE }, { kind: 'text', text: 'Zürich, about 443k people' }, { kind: 'json', value: { city: 'Zürich' } }, { kind: 'json', value: VALID });
    const session = await start({ model: `${provider}:${model}`, outputSchema: CITY });

    await expect(send(session, 'the largest Swiss city?')).rejects.toMatchObject({ cause: { type: 'output_invalid' } });
    const [end] = ofType(await readLog(session), 'turn/end');
    expect(end).toMatchObject({ status: 'failed', failure: { type: 'output_invalid', message: expect.stringContaining('after 2 repair requests') } });
    expect(end?.failure?.message).toContain(errorsOf(CITY, { city: 'Zürich' }).join('; '));
    expect(end?.output).toBeUndefined();
    expect(requests(model)).toHaveLength(3);
    expect(sentText(model, 2)).toContain('not valid JSON');
  });

  it('ends a turn that called tools in between in the schema\'s shape', async () => {
    const model = unique(`so-tools-${provider}`);
    h().llm.script(model, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '443037+1' } }] }, { kind: 'json', value: { ...VALID, population: 443_038 } });
    const session = await start({ model: `${provider}:${model}`, outputSchema: CITY });

    expect(await send(session, 'the largest Swiss city, plus one person?')).toMatchObject({ status: 'completed', output: { population: 443_038 } });
    expect(requests(model).map((r) => r.output?.mode)).toEqual([mode, mode]);
    expect(ofType(await readLog(session), 'tool/result')).toMatchObject([{ name: 'calculator', code: 'ok' }]);
  });

  it('lets a message\'s schema override the session\'s for its turn only', async () => {
    const model = unique(`so-override-${provider}`);
    h().llm.script(model, { kind: 'json', value: { ok: true } }, { kind: 'json', value: VALID });
    const session = await start({ model: `${provider}:${model}`, outputSchema: CITY });

    expect(await send(session, 'is it?', VERDICT)).toMatchObject({ turn: 1, status: 'completed', output: { ok: true } });
    expect(await send(session, 'the largest Swiss city?')).toMatchObject({ turn: 2, status: 'completed', output: VALID });
    expect(ofType(await readLog(session), 'turn/start').map((e) => e.output?.schema)).toEqual([VERDICT, CITY]);
    expect(requests(model).map((r) => r.output?.schema)).toMatchObject([{ required: ['ok'] }, { required: ['city', 'population'] }]);
  });
});

describe('structured output beside the session\'s other rules', () => {
  it('counts repair requests towards maxSteps: an invalid answer on the last step fails output_invalid, with no repair request left hanging', async () => {
    const model = unique('so-steps');
    h().llm.script(model, { kind: 'json', value: NEGATIVE }, { kind: 'json', value: NEGATIVE }, { kind: 'json', value: VALID });
    const session = await start({ model: `openai:${model}`, outputSchema: CITY, outputRetries: 5, maxSteps: 2 });

    await expect(send(session, 'the largest Swiss city?')).rejects.toMatchObject({ cause: { type: 'output_invalid', message: expect.stringContaining('maxSteps') } });
    expect(requests(model)).toHaveLength(2);
    expect(ofType(await readLog(session), 'output/rejected')).toHaveLength(1);
    expect((await session.query(stateQuery)).stepsTaken).toBe(2);
  });

  it.each(['anthropic', 'openai'])('%s: a refusal under a schema fails the turn refused, and is not repaired', async (provider) => {
    const model = unique(`so-refuse-${provider}`);
    h().llm.script(model, { kind: 'refusal', text: 'I cannot help with that request.' }, { kind: 'json', value: VALID });
    const session = await start({ model: `${provider}:${model}`, outputSchema: CITY });

    await expect(send(session, 'something bad')).rejects.toMatchObject({ cause: { type: 'refused' } });
    expect(ofType(await readLog(session), 'turn/end')[0]?.failure).toEqual({ type: 'refused', message: expect.stringContaining('I cannot help with that request.') });
    expect(requests(model)).toHaveLength(1);
  });

  it('sends a session without a schema free text, as before', async () => {
    const model = unique('so-free');
    h().llm.script(model, { kind: 'text', text: '{"not": "checked"' });
    const session = await start({ model: `anthropic:${model}` });

    expect(await send(session, 'hello')).toEqual({ turn: 1, status: 'completed', reason: 'answered' });
    expect(requests(model)[0]?.output).toBeUndefined();
    expect(ofType(await readLog(session), 'turn/start')[0]).not.toHaveProperty('output');
  });

  it('keeps the output across continue-as-new and in a fork: awaitTurn answers it from the carried outcome and from the log', async () => {
    const model = unique('so-carried');
    // Three steps: the history is past continueAsNewAfterEvents when the turn ends, where the session decides.
    h().llm.script(model, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '1+1' } }] }, { kind: 'json', value: NEGATIVE }, { kind: 'json', value: VALID });
    const session = await start({ model: `google:${model}`, outputSchema: CITY, continueAsNewAfterEvents: 20 });
    await send(session, 'the largest Swiss city?');

    await eventually('the session to continue as new', async () => ((await session.query(stateQuery)).runs === 2 ? true : undefined), 10_000);
    expect(await session.executeUpdate(awaitTurnUpdate, { args: [{ turn: 1 }] })).toMatchObject({ output: VALID });
    const fork = await forkSession(h().client, h().env, session.workflowId);
    expect(await fork.executeUpdate(awaitTurnUpdate, { args: [{ turn: 1 }] })).toMatchObject({ output: VALID });
    expect(ofType(await readLog(fork), 'output/rejected')).toHaveLength(1);
    // The fork's own turns answer in the source's shape too.
    expect((await fork.query(stateQuery)).settings).toMatchObject({ outputSchema: CITY, outputRetries: 2 });
  });
  it('carries a large value into the next run in its log only, not in the carried outcomes, and awaitTurn still answers it', async () => {
    const model = unique('so-carried-large');
    const large = { city: 'Z'.repeat(CARRIED_OUTPUT_BYTES), population: 1 };
    h().llm.script(model, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '1+1' } }] }, { kind: 'json', value: large });
    const session = await start({ model: `openai:${model}`, outputSchema: CITY, continueAsNewAfterEvents: 20 });
    expect(await send(session, 'a long name?')).toMatchObject({ output: large });

    await eventually('the session to continue as new', async () => ((await session.query(stateQuery)).runs === 2 ? true : undefined), 10_000);
    const started = (await session.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    const next = defaultPayloadConverter.fromPayload<SessionInput>(started ?? {});
    expect(next.continued?.outcomes?.[0]).toEqual({ turn: 1, status: 'completed', reason: 'answered' });
    expect(await session.executeUpdate(awaitTurnUpdate, { args: [{ turn: 1 }] })).toMatchObject({ output: large });
  });
});

describe('checking an answer against its schema, in the workflow\'s own code', () => {
  it('names the path of each error, and bounds them: at most OUTPUT_ERRORS.max lines of OUTPUT_ERRORS.chars, the last counting the rest', () => {
    const schema: OutputSchema = { type: 'object', properties: { items: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } } };
    const verdict = validateOutput({ schema }, JSON.stringify({ items: [{ name: 'x'.repeat(5) }, { name: 1 }, ...Array.from({ length: 29 }, () => ({}))] }));
    expect(verdict.ok).toBe(false);
    const errors = verdict.ok ? [] : verdict.errors;
    expect(errors).toHaveLength(OUTPUT_ERRORS.max);
    expect(errors[0]).toBe('items[1].name: Invalid input: expected string, received number');
    expect(errors.at(-1)).toBe('… and 11 more errors');
    const long = validateOutput({ schema: { type: 'object', properties: { ['k'.repeat(400)]: { type: 'string' } } } }, JSON.stringify({ ['k'.repeat(400)]: 1 }));
    expect(long.ok ? [] : long.errors.map((e) => e.length)).toEqual([OUTPUT_ERRORS.chars]);
  });

  it('says where an answer that is not JSON breaks, without quoting it', () => {
    expect(validateOutput({ schema: CITY }, '{"city": "Zürich", "population": 4} and more')).toEqual({ ok: false, errors: [expect.stringMatching(/^\(root\): the answer is not valid JSON at character 36;/)] });
    expect(validateOutput({ schema: CITY }, '{"city":')).toEqual({ ok: false, errors: [expect.stringContaining('it ends after character 8, before the value does')] });
    expect(validateOutput({ schema: CITY }, 'Sure! {"city": "secret"}')).toEqual({ ok: false, errors: [expect.not.stringContaining('secret')] });
  });

  it.each([
    ['if/then/else', { type: 'object', if: { properties: { a: { const: 1 } } }, then: { required: ['b'] } }, 'Conditional schemas'],
    ['not', { type: 'object', properties: { a: { not: { type: 'string' } } } }, 'not is not supported'],
    ['an external $ref', { type: 'object', properties: { a: { $ref: 'https://example.com/a.json' } } }, 'External $ref'],
    ['a $ref cycle', { type: 'object', properties: { a: { $ref: '#/$defs/x' } }, $defs: { x: { $ref: '#/$defs/y' }, y: { $ref: '#/$defs/x' } } }, 'the $ref chain #/$defs/x → #/$defs/y → #/$defs/x comes back to itself'],
  ])('refuses a schema with %s where it is given, in one line naming the field, for a session and for a message', (_what, schema, says) => {
    expect(() => parseOrThrow(SessionRunInputSchema, { model: 'openai:gpt-5', outputSchema: schema }, 'session input')).toThrow(`invalid session input: outputSchema: uses what the workflow cannot validate: ${says}`);
    expect(() => parseOrThrow(SendMessageSchema, { text: 'hi', outputSchema: schema }, 'message')).toThrow(`invalid message: outputSchema: uses what the workflow cannot validate: ${says}`);
  });

  it.each([
    ['a nested quantifier', { name: { type: 'string', pattern: '^(a+)+$' } }, '^(a+)+$'],
    ['a repeated alternation', { host: { type: 'string', pattern: '^([a-z]+|[0-9]+)*$' } }, '^([a-z]+|[0-9]+)*$'],
    ['a backreference', { word: { type: 'string', pattern: '(\\w+) \\1' } }, '(\\w+) \\1'],
    ['a slow patternProperties key', { tags: { type: 'object', patternProperties: { '^(x*)*$': { type: 'string' } } } }, '^(x*)*$'],
    ['three unbounded repeats in a row', { note: { type: 'string', pattern: '^\\w*\\w*\\w*!$' } }, '^\\w*\\w*\\w*!$'],
  ])('refuses a pattern with %s, which could take exponential or high polynomial time on an answer in the workflow task', (_what, properties, pattern) => {
    const says = `outputSchema: has a pattern the workflow could take too long to check an answer against: ${JSON.stringify(pattern)}`;
    expect(() => parseOrThrow(SessionRunInputSchema, { model: 'openai:gpt-5', outputSchema: { type: 'object', properties } }, 'session input')).toThrow(says);
    expect(() => parseOrThrow(SendMessageSchema, { text: 'hi', outputSchema: { type: 'object', properties } }, 'message')).toThrow(says);
  });

  it('accepts the patterns that backtrack in linear time: classes, plain repeated groups, named and non-capturing groups', () => {
    const properties = { id: { type: 'string', pattern: '^[a-z0-9]+$' }, sku: { type: 'string', pattern: '^[A-Z]+-[0-9]+$' }, date: { type: 'string', pattern: '^(?<year>\\d{4})-(?:\\d{2})$' }, pairs: { type: 'string', pattern: '^(ab)+$' } };
    const schema: OutputSchema = { type: 'object', properties, required: ['id'] };
    expect(parseOrThrow(SendMessageSchema, { text: 'hi', outputSchema: schema }, 'message').outputSchema).toEqual(schema);
    expect(validateOutput({ schema }, JSON.stringify({ id: 'abc', sku: 'AB-12', date: '2026-12', pairs: 'abab' }))).toMatchObject({ ok: true });
  });

  it('carries a schema it accepted into the next run and its log unchecked, so a worker with stricter checks still continues the session', () => {
    // A pattern an older worker accepted and today's checks refuse.
    const accepted: OutputSchema = { type: 'object', properties: { host: { type: 'string', pattern: '^(a|b)*$' } } };
    const continued = { events: [], retryPolicy: 'default', turnsRun: 1, runs: 1 } as const;
    expect(() => parseOrThrow(SessionRunInputSchema, { model: 'openai:gpt-5', outputSchema: accepted }, 'session input')).toThrow('outputSchema: has a pattern');
    expect(parseOrThrow(SessionRunInputSchema, { model: 'openai:gpt-5', outputSchema: accepted, continued }, 'session input').outputSchema).toEqual(accepted);
    const turnStart = { type: 'turn/start', seq: 0, at: 0, turn: 1, text: 'hi', output: { schema: accepted } };
    expect(SessionEventSchema.parse(turnStart)).toEqual(turnStart);
  });

  it('accepts a recursive schema whose $ref reaches a schema', () => {
    const tree: OutputSchema = { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } }, required: ['name'] };
    expect(parseOrThrow(SendMessageSchema, { text: 'hi', outputSchema: tree }, 'message').outputSchema).toEqual(tree);
    expect(validateOutput({ schema: tree }, JSON.stringify({ name: 'a', children: [{ name: 'b', children: [{}] }] }))).toEqual({ ok: false, errors: ['children[0].children[0].name: Invalid input: expected string, received undefined'] });
  });
});
