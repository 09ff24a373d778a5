/**
 * Fuzzes the session's input, the first trust boundary of the workflow: anyone who can start
 * a workflow can send it anything. Two layers: the schema itself, pure and with many cases
 * (every field valid, then one field made wrong, an unknown key added, or any JSON at all);
 * then fewer cases end to end on the dev server, where a refused input must fail the run at
 * once with `invalid_input`, never a workflow task that fails and is retried.
 */
import { SESSION_REVISION } from '../../contracts/session-revision';
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SESSION_WORKFLOW, SessionInputSchema, describeIssues } from '../../contracts/api';
import { RETRY_LIMITS } from '../../contracts/retry-policy';
import { COMPACT_AT, SESSION_LIMITS, TOOL_NAMES } from '../../contracts/session-settings';
import { MAX_OUTPUT_SCHEMA_BYTES, OUTPUT_RETRIES } from '../../contracts/structured-output';
import { TURN_LIMITS } from '../../contracts/turn-limits';
import { AGENT_DEPTH } from '../../contracts/sub-agents';
import { useAgentHarness } from '../support/agent-harness';
import { badFraction, badInteger, badRetryPolicy, notABoolean, notAnArray, notAnObject, notANumber, notAString, tooLong, unknownKey, withKey } from '../support/bad-values';
import { eventually } from '../support/eventually';
import { assertProperty } from '../support/fuzz';

/** A refusal is one line a person reads, whatever was sent. */
const MAX_REFUSAL_CHARS = 2_000;

const int = (name: keyof typeof SESSION_LIMITS) => ({ valid: fc.integer(SESSION_LIMITS[name]), bad: badInteger(SESSION_LIMITS[name].min, SESSION_LIMITS[name].max) });
const validPolicy = fc
  .record(Object.fromEntries(Object.entries(RETRY_LIMITS).map(([k, l]) => [k, fc.integer(l)])) as Record<keyof typeof RETRY_LIMITS, fc.Arbitrary<number>>)
  .map((p) => ({ ...p, maxDelayMs: Math.max(p.maxDelayMs, p.baseDelayMs) }));

/** An event no log holds: not an object, empty, or one whose every field is of the wrong kind. */
const badEvent = fc.oneof(notAnObject, fc.constant({}), fc.constantFrom('turn/start', 'assistant', 'tools/listed', 'launch').map((type) => ({ type, seq: -1, at: 'now', turn: 0, text: 5 })));
const goodEvents = [
  { type: 'turn/start', seq: 0, at: 0, turn: 1, text: 'hi' },
  { type: 'turn/end', seq: 1, at: 0, turn: 1, status: 'completed', reason: 'answered' },
];
const badLog = fc.oneof(notAnArray, fc.tuple(fc.integer({ min: 0, max: 2 }), fc.array(badEvent, { minLength: 1, maxLength: 3 })).map(([good, bad]) => [...goodEvents.slice(0, good), ...bad]));
const continued = { events: goodEvents, retryPolicy: 'default', turnsRun: 1, runs: 1 };
const fork = { fromWorkflowId: 'the-source', events: goodEvents };
const mcpName = fc.stringMatching(/^[A-Za-z0-9-]{1,32}$/);

/**
 * Every field of the input: values it takes, and values it must refuse. The table is checked
 * against the schema's own keys below, so a field added without a line here fails this file.
 */
const FIELDS: Record<string, { valid: fc.Arbitrary<unknown>; bad: fc.Arbitrary<unknown> }> = {
  model: {
    valid: fc.constantFrom('anthropic:claude-sonnet-4-5', 'openai:gpt-4o-mini', 'google:gemini-2.5-flash', 'openai:org/model:v1@2'),
    bad: fc.oneof(notAString, fc.constantFrom('gpt-4o', 'anthropic:', 'azure:gpt-4o', 'anthropic:a b', ' openai:x', 'openai:x\n')),
  },
  fallbacks: {
    valid: fc.array(fc.constantFrom('openai:gpt-5', 'google:gemini-2.5-pro', 'anthropic:claude-haiku-4-5'), { minLength: 1, maxLength: 4 }),
    bad: fc.oneof(notAnArray, fc.constant([]), fc.constant(Array.from({ length: 5 }, () => 'openai:gpt-5')), fc.array(fc.oneof(notAString, fc.constantFrom('gpt-5', 'azure:x')), { minLength: 1, maxLength: 2 })),
  },
  fallbackAfterMs: int('fallbackAfterMs'),
  fallbackReturnAfterMs: int('fallbackReturnAfterMs'),
  priority: { valid: fc.constantFrom('interactive', 'batch'), bad: fc.oneof(notAString, fc.constantFrom('urgent', 'Batch', '')) },
  system: { valid: fc.string({ maxLength: 40 }), bad: fc.oneof(notAString, tooLong(100_000)) },
  retryPolicy: { valid: fc.oneof(fc.constant(null), validPolicy), bad: badRetryPolicy },
  maxSteps: int('maxSteps'),
  toolConcurrency: int('toolConcurrency'),
  maxTokens: int('maxTokens'),
  reasoning: {
    valid: fc.oneof(fc.constantFrom('off', 'low', 'medium', 'high'), fc.integer({ min: 1_024, max: 128_000 })),
    bad: fc.oneof(fc.constantFrom('max', 'OFF', 'none', ''), badInteger(1_024, 128_000).filter((v) => typeof v !== 'string')),
  },
  promptCache: { valid: fc.boolean(), bad: notABoolean },
  idleTimeoutMs: int('idleTimeoutMs'),
  toolTimeouts: {
    valid: fc.dictionary(fc.constantFrom(...TOOL_NAMES), fc.integer(SESSION_LIMITS.toolTimeoutMs), { maxKeys: 4 }),
    bad: fc.oneof(
      notAnObject,
      fc.array(fc.integer()),
      // zod drops a `__proto__` key of a record before any check sees it: accepted, with no effect.
      unknownKey([...TOOL_NAMES, '__proto__']).map((k) => withKey({}, k, 1_000)),
      fc.constantFrom(...TOOL_NAMES).chain((k) => badInteger(SESSION_LIMITS.toolTimeoutMs.min, SESSION_LIMITS.toolTimeoutMs.max).map((v) => ({ [k]: v }))),
    ),
  },
  tools: {
    valid: fc.subarray([...TOOL_NAMES]),
    bad: fc.oneof(
      notAnArray,
      fc.array(fc.oneof(fc.constantFrom('shell', 'Calculator', ''), notAString), { minLength: 1, maxLength: 3 }),
      // Too many names, and many wrong ones: each wrong one is an issue, and the refusal still one line.
      fc.constant(Array.from({ length: 1_001 }, () => 'calculator')),
      fc.constant(Array.from({ length: 1_000 }, () => 0)),
    ),
  },
  mcp: {
    valid: fc.array(mcpName, { maxLength: 3 }),
    bad: fc.oneof(notAnArray, fc.array(fc.oneof(fc.constantFrom('', 'a__b', 'a b', 'x'.repeat(33), 'ü'), notAString), { minLength: 1, maxLength: 3 })),
  },
  customTools: {
    valid: fc.array(fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/), { maxLength: 3 }),
    bad: fc.oneof(notAnArray, fc.array(fc.oneof(fc.constantFrom('', 'a b', 'x'.repeat(65), 'ü'), notAString), { minLength: 1, maxLength: 3 })),
  },
  agent: {
    valid: fc.record({ name: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/), settings: fc.oneof(fc.constant({}), fc.record({ maxSteps: fc.integer(SESSION_LIMITS.maxSteps) })) }),
    bad: fc.oneof(
      notAnObject,
      fc.constantFrom('', '-x', 'a b', 'x'.repeat(65), 'ü').map((name) => ({ name, settings: {} })),
      notAnObject.map((settings) => ({ name: 'support', settings })),
      fc.constant({ name: 'support', settings: {}, model: 'openai:gpt-4o' }),
    ),
  },
  agents: {
    valid: fc.array(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/), { maxLength: 3 }),
    bad: fc.oneof(notAnArray, fc.array(fc.oneof(fc.constantFrom('', '-x', 'a b', 'x'.repeat(65), 'ü'), notAString), { minLength: 1, maxLength: 3 })),
  },
  handoffs: {
    valid: fc.array(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/), { maxLength: 3 }),
    bad: fc.oneof(notAnArray, fc.array(fc.oneof(fc.constantFrom('', '-x', 'a b', 'x'.repeat(65), 'ü'), notAString), { minLength: 1, maxLength: 3 })),
  },
  handoff: {
    valid: fc.record({
      fromWorkflowId: fc.constant('the-front-desk'),
      fromAgent: fc.constant('front-desk'),
      chain: fc.constant(['front-desk']),
      turn: fc.integer({ min: 1, max: 5 }),
      text: fc.string({ minLength: 1, maxLength: 40 }),
    }),
    bad: fc.oneof(notAnObject, fc.constant({}), fc.constant({ fromWorkflowId: '', fromAgent: 'front-desk', turn: 0, text: '' }), fc.constant({ fromWorkflowId: 'f', fromAgent: 'front-desk', turn: 1, text: 'hi', reason: ' ' })),
  },
  maxAgentDepth: { valid: fc.integer(AGENT_DEPTH), bad: badInteger(AGENT_DEPTH.min, AGENT_DEPTH.max) },
  revision: { valid: fc.integer({ min: SESSION_REVISION.first, max: SESSION_REVISION.current }), bad: badInteger(SESSION_REVISION.first, SESSION_REVISION.current) },
  parent: {
    valid: fc.record({
      workflowId: fc.constant('the-parent'),
      turn: fc.integer({ min: 1, max: 5 }),
      step: fc.integer({ min: 1, max: 5 }),
      callId: fc.constant('toolu_1'),
      lineage: fc.constant(['planner']),
      depth: fc.integer({ min: 1, max: AGENT_DEPTH.max }),
      maxDepth: fc.integer(AGENT_DEPTH),
      task: fc.string({ minLength: 1, maxLength: 40 }).filter((t) => t.trim().length > 0),
    }),
    bad: fc.oneof(notAnObject, fc.constant({}), fc.constant({ workflowId: 'p', turn: 0, step: 1, callId: 'c', lineage: [], depth: 0, maxDepth: 0, task: ' ' })),
  },
  approvalRequired: {
    valid: fc.array(fc.string({ minLength: 1, maxLength: 20 }), { maxLength: 3 }),
    bad: fc.oneof(notAnArray, fc.array(fc.oneof(fc.constant(''), notAString), { minLength: 1, maxLength: 3 }), fc.constant(Array.from({ length: 1_001 }, () => '*'))),
  },
  approvalTimeoutMs: int('approvalTimeoutMs'),
  continueAsNewAfterEvents: int('continueAsNewAfterEvents'),
  budgetUsd: { valid: fc.double({ min: 0.01, max: 1_000_000, noNaN: true }), bad: badFraction(0, 1_000_000, { min: true }) },
  budgetTokens: { valid: fc.integer({ min: 1, max: 1e12 }), bad: badInteger(1, 1e12) },
  budgetWarn: { valid: fc.double({ min: 0.01, max: 0.99, noNaN: true }), bad: badFraction(0, 1, { min: true, max: true }) },
  turnTimeoutMs: { valid: fc.integer(TURN_LIMITS.turnTimeoutMs), bad: badInteger(TURN_LIMITS.turnTimeoutMs.min, TURN_LIMITS.turnTimeoutMs.max) },
  maxRepeats: { valid: fc.integer(TURN_LIMITS.maxRepeats), bad: badInteger(TURN_LIMITS.maxRepeats.min, TURN_LIMITS.maxRepeats.max) },
  contextWindow: int('contextWindow'),
  compactAt: { valid: fc.double({ min: COMPACT_AT.min, max: COMPACT_AT.max, noNaN: true }), bad: badFraction(COMPACT_AT.min, COMPACT_AT.max) },
  clearToolResultsAfter: int('clearToolResultsAfter'),
  outputSchema: {
    valid: fc.constantFrom({ type: 'object' }, { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false }),
    bad: fc.oneof(notAnObject, fc.constantFrom({ type: 'string' }, { type: 'array', items: {} }, {}, { type: 'object', description: 'x'.repeat(MAX_OUTPUT_SCHEMA_BYTES) })),
  },
  outputRetries: { valid: fc.integer(OUTPUT_RETRIES), bad: badInteger(OUTPUT_RETRIES.min, OUTPUT_RETRIES.max) },
  continued: {
    valid: fc.constant(continued),
    bad: fc.oneof(notAnObject, badLog.map((events) => ({ ...continued, events })), fc.oneof(fc.integer({ max: 0 }), fc.constant(1.5), notANumber).map((runs) => ({ ...continued, runs }))),
  },
  fork: {
    valid: fc.constant(fork),
    bad: fc.oneof(notAnObject, badLog.map((events) => ({ ...fork, events })), fc.oneof(fc.constant(''), notAString).map((fromWorkflowId) => ({ ...fork, fromWorkflowId }))),
  },
};
const FIELD_NAMES = Object.keys(FIELDS);

/** A valid input: the model, and any of the other fields with a value each takes. */
const validInput = fc.record(Object.fromEntries(Object.entries(FIELDS).map(([k, f]) => [k, f.valid])), { requiredKeys: ['model'] }) as fc.Arbitrary<Record<string, unknown>>;

/** A valid input with one thing wrong, and the name a refusal must mention. */
const wrongInput = fc.oneof(
  fc.tuple(validInput, fc.constantFrom(...FIELD_NAMES)).chain(([input, field]) => (FIELDS[field] as { bad: fc.Arbitrary<unknown> }).bad.map((bad) => ({ input: withKey(input, field, bad), names: field }))),
  fc.tuple(validInput, unknownKey(FIELD_NAMES), fc.jsonValue({ maxDepth: 2 })).map(([input, key, value]) => ({ input: withKey(input, key, value), names: key })),
  validInput.map(({ model: _model, ...input }) => ({ input, names: 'model' })),
);

function refusalOf(input: unknown): string | undefined {
  const parsed = SessionInputSchema.safeParse(input);
  return parsed.success ? undefined : describeIssues(parsed.error);
}

describe('the session input schema (pure)', () => {
  it('has a fuzzed line for every field it takes', () => {
    expect(FIELD_NAMES.sort()).toEqual(Object.keys(SessionInputSchema.shape).sort());
  });

  it('takes every input whose fields are each within their range', async () => {
    await assertProperty(
      200,
      fc.property(validInput, (input) => {
        expect(refusalOf(input)).toBeUndefined();
      }),
    );
  });

  it('refuses an input with one field wrong, an unknown key or no model, in one line that names it', async () => {
    await assertProperty(
      600,
      fc.property(wrongInput, ({ input, names }) => {
        const refusal = refusalOf(input);
        expect(refusal).toBeDefined();
        expect(refusal).toContain(names);
        expect(refusal).not.toMatch(/[\r\n]/);
        expect(refusal?.length).toBeLessThanOrEqual(MAX_REFUSAL_CHARS);
      }),
    );
  });

  it('answers any JSON value with a refusal of at most one line, never a throw', async () => {
    await assertProperty(
      1_000,
      fc.property(fc.oneof(fc.jsonValue(), fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }))), (input) => {
        const refusal = refusalOf(input);
        expect(refusal).toBeDefined();
        expect(refusal).not.toMatch(/[\r\n]/);
        expect(refusal?.length).toBeLessThanOrEqual(MAX_REFUSAL_CHARS);
      }),
    );
  });
});

// Failed runs are what this file causes on purpose: keep the worker's WARN line for each
// out of the report. Errors still show. (Before the harness installs its own.)
Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, console: {} } } });
const h = useAgentHarness();

describe('a session started with a wrong input (end to end, raw client)', () => {
  it('fails at once with invalid_input and the schema\'s own refusal: one workflow task, none failed or timed out', async () => {
    await assertProperty(
      12,
      fc.asyncProperty(wrongInput, async ({ input }) => {
        // As a payload carries it: JSON has no NaN, undefined or -0.
        const sent: unknown = JSON.parse(JSON.stringify(input));
        const refusal = refusalOf(sent);
        fc.pre(refusal !== undefined);
        const workflowId = `fuzz-input-${randomUUID()}`;
        const handle = await h().client.workflow.start(SESSION_WORKFLOW, { taskQueue: h().taskQueue, workflowId, args: [sent] });
        const events = await eventually(
          'the run or one of its workflow tasks to fail',
          async () => {
            const history = (await handle.fetchHistory()).events ?? [];
            return history.some((e) => e.workflowExecutionFailedEventAttributes || e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes) ? history : undefined;
          },
          20_000,
        );
        expect(events.filter((e) => e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes)).toEqual([]);
        expect(events.filter((e) => e.workflowTaskStartedEventAttributes)).toHaveLength(1);
        const error = await handle.result().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(WorkflowFailedError);
        const cause = (error as WorkflowFailedError).cause;
        expect(cause).toBeInstanceOf(ApplicationFailure);
        expect(cause).toMatchObject({ type: 'invalid_input', nonRetryable: true, message: `invalid session input: ${refusal}` });
      }),
    );
  });
});
