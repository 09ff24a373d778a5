/**
 * Fuzzes every Update of the session workflow, each a trust boundary: anyone who can reach
 * the workflow can send any argument by name. Two layers: the argument schemas, pure and
 * with many cases; then fewer cases end to end on the dev server, where a wrong argument
 * must be refused by the Update's validator with the schema's own words, and leave nothing
 * in history (a refused Update's workflow task is speculative).
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { startSession, type SessionHandle } from '../../client/sessions';
import * as api from '../../contracts/api';
import { ApprovalDecisionSchema, AwaitTurnSchema, RetryPolicyUpdateSchema, SendMessageSchema, describeIssues } from '../../contracts/api';
import { BudgetUpdateSchema } from '../../contracts/budget';
import { DEFAULT_RETRY_POLICY, RETRY_LIMITS } from '../../contracts/retry-policy';
import type { z } from 'zod';
import { useAgentHarness } from '../support/agent-harness';
import { badFraction, badInteger, badRetryPolicy, notABoolean, notAnObject, notANumber, notAString, tooLong, unknownKey, withKey } from '../support/bad-values';
import { eventually } from '../support/eventually';
import { assertProperty } from '../support/fuzz';

const MAX_REFUSAL_CHARS = 2_000;

interface Wrong {
  argument: unknown;
  /** The field or key its refusal must name; none for an argument that is no object at all. */
  names?: string;
}

/** A valid argument with one field given a wrong value, an unknown key added, or no object at all. */
function wrongArgument(valid: Record<string, unknown>, fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Wrong> {
  const keys = Object.keys(fields);
  return fc.oneof(
    fc.constantFrom(...keys).chain((key) => (fields[key] as fc.Arbitrary<unknown>).map((bad) => ({ argument: withKey(valid, key, bad), names: key }))),
    fc.tuple(unknownKey(keys), fc.jsonValue({ maxDepth: 2 })).map(([key, value]) => ({ argument: withKey(valid, key, value), names: key })),
    notAnObject.map((argument) => ({ argument })),
  );
}

const notNull = <T>(arbitrary: fc.Arbitrary<T>) => arbitrary.filter((v) => v !== null);

/** Each Update that takes an argument: its schema, the word its refusal starts with, and arguments it must refuse. */
const WITH_ARGUMENT: Record<string, { schema: z.ZodType; what: string; wrong: fc.Arbitrary<Wrong> }> = {
  send: {
    schema: SendMessageSchema,
    what: 'message',
    wrong: wrongArgument({ text: 'hello' }, { text: fc.oneof(notAString, fc.constantFrom('', ' ', '\n\t '), tooLong(200_000)) }),
  },
  awaitTurn: {
    schema: AwaitTurnSchema,
    what: 'turn',
    wrong: wrongArgument({ turn: 1 }, { turn: fc.oneof(fc.integer({ min: Number.MIN_SAFE_INTEGER, max: 0 }), fc.constantFrom(1.5, 2 ** 53 + 2, 1e21), notANumber) }),
  },
  setRetryPolicy: {
    schema: RetryPolicyUpdateSchema,
    what: 'retry policy',
    wrong: fc.oneof(
      badRetryPolicy.map((argument) => ({ argument })),
      // `null` is a policy: retries off.
      wrongArgument({ ...DEFAULT_RETRY_POLICY }, Object.fromEntries(Object.entries(RETRY_LIMITS).map(([k, l]) => [k, badInteger(l.min, l.max)]))).filter((w) => w.argument !== null),
    ),
  },
  setBudget: {
    schema: BudgetUpdateSchema,
    what: 'budget',
    wrong: wrongArgument({}, { usd: notNull(badFraction(0, 1_000_000, { min: true })), tokens: notNull(badInteger(1, 1e12)), warnAt: notNull(badFraction(0, 1, { min: true, max: true })) }),
  },
  decideApproval: {
    schema: ApprovalDecisionSchema,
    what: 'approval decision',
    wrong: wrongArgument({ callId: 'toolu_1', approved: true }, { callId: fc.oneof(notAString, fc.constant('')), approved: notABoolean, reason: fc.oneof(notAString, tooLong(2_000)) }),
  },
};
const WITHOUT_ARGUMENT = ['cancelTurn', 'end', 'refreshTools'];

function refusalOf(schema: z.ZodType, argument: unknown): string | undefined {
  const parsed = schema.safeParse(argument);
  return parsed.success ? undefined : describeIssues(parsed.error);
}

describe('the Update argument schemas (pure)', () => {
  it('cover every Update the session defines', () => {
    const defined = Object.values(api).flatMap((v) => (typeof v === 'object' && v !== null && (v as { type?: unknown }).type === 'update' ? [(v as { name: string }).name] : []));
    expect([...Object.keys(WITH_ARGUMENT), ...WITHOUT_ARGUMENT].sort()).toEqual(defined.sort());
  });

  it.each(Object.entries(WITH_ARGUMENT))('refuse a wrong %s argument in one line that names the field, never with a throw', async (_name, { schema, wrong }) => {
    await assertProperty(
      300,
      fc.property(wrong, ({ argument, names }) => {
        const refusal = refusalOf(schema, argument);
        expect(refusal).toBeDefined();
        if (names !== undefined) expect(refusal).toContain(names);
        expect(refusal).not.toMatch(/[\r\n]/);
        expect(refusal?.length).toBeLessThanOrEqual(MAX_REFUSAL_CHARS);
      }),
    );
  });

  it.each(Object.entries(WITH_ARGUMENT))('answer any JSON value given to %s with a result or a one-line refusal, never a throw', async (_name, { schema }) => {
    await assertProperty(
      300,
      fc.property(fc.jsonValue(), (argument) => {
        const refusal = refusalOf(schema, argument);
        if (refusal !== undefined) expect(refusal.length).toBeLessThanOrEqual(MAX_REFUSAL_CHARS);
      }),
    );
  });
});

const h = useAgentHarness();

type HistoryEvents = Awaited<ReturnType<SessionHandle['fetchHistory']>>['events'];

describe('a wrong Update argument sent to a running session (end to end, by name)', () => {
  let session: SessionHandle;
  const history = async (): Promise<NonNullable<HistoryEvents>> => (await session.fetchHistory()).events ?? [];
  beforeAll(async () => {
    session = await startSession(h().client, h().env, { model: `anthropic:fuzz-updates-${Date.now()}`, idleTimeoutMs: 120_000 });
    // Until its first workflow task is done, history still grows by itself.
    await eventually('the first workflow task to complete', async () => ((await history()).some((e) => e.workflowTaskCompletedEventAttributes) ? true : undefined));
  });

  /** Sends `args` by name, untyped as any caller could, and returns the refusal; asserts history did not move. */
  async function refusalFromSession(update: string, args: unknown[]): Promise<string | undefined> {
    const before = (await history()).length;
    // By name and untyped, as any caller could send it: the client's own types would refuse these.
    const raw = h().client.workflow.getHandle(session.workflowId);
    const error = await raw.executeUpdate<unknown, [unknown, ...unknown[]]>(update, { args: args as [unknown, ...unknown[]] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
    const after = await history();
    expect(after.some((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toBe(false);
    expect(after.length).toBe(before);
    return (error as WorkflowUpdateFailedError).cause?.message;
  }

  it.each(Object.entries(WITH_ARGUMENT))('refuses a wrong %s argument in its validator with the schema\'s refusal, and records nothing', async (update, { schema, what, wrong }) => {
    await assertProperty(
      6,
      fc.asyncProperty(wrong, async ({ argument }) => {
        // As a payload carries it: JSON has no NaN, undefined or -0.
        const sent: unknown = JSON.parse(JSON.stringify(argument) ?? 'null');
        const refusal = refusalOf(schema, sent);
        fc.pre(refusal !== undefined);
        expect(await refusalFromSession(update, [sent])).toBe(`invalid ${what}: ${refusal}`);
      }),
    );
  });

  it.each(WITHOUT_ARGUMENT)('refuses %s given any argument, and records nothing', async (update) => {
    await assertProperty(
      4,
      fc.asyncProperty(fc.array(fc.jsonValue({ maxDepth: 2 }), { minLength: 1, maxLength: 3 }), async (args) => {
        expect(await refusalFromSession(update, args)).toBe(`${update} takes no argument`);
      }),
    );
  });
});
