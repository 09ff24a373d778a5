import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';
import { BudgetSchema, type Budget, type BudgetUpdate } from './budget';
import { MAX_EVENT_LIST_ENTRIES, ReasoningSchema, UsageSchema, type Usage } from './messages';
import { ModelRefSchema } from './model-ref';
import { SessionPrioritySchema } from './fleet-limits';
import { SessionRetryPolicySchema, type SessionRetryPolicy } from './retry-policy';
import { FailureSummarySchema, SessionLogSchema, type SessionEvent } from './session-log';
import { SpendSchema, type Spend } from './spend';
import { MaxRepeatsSchema, TurnTimeoutSchema } from './turn-limits';
import { COMPACT_AT, CompactAtSchema, MAX_FALLBACKS, SESSION_LIMITS, ToolNameSchema, ToolTimeoutsSchema, boundedInt, type SessionSettings } from './session-settings';
import { CustomToolNameSchema, CustomToolOffersSchema } from './tools/custom-tool-offer';
import { McpServerNameSchema, McpToolListSchema, type McpToolList } from './tools/mcp-tools';
import { AgentNameSchema, AgentRecordSchema, type AgentRecord } from './agents/agent-record';
import { AGENT_DEPTH, SubAgentOffersSchema, SubAgentParentSchema, type SubAgentAnswer } from './sub-agents';
import { HandedOffToSchema, HandoffSchema, type HandedOffTo } from './handoffs';
import { SessionRevisionSchema } from './session-revision';
import { OUTPUT_RETRIES, OutputRetriesSchema, OutputSchemaSchema, RecordedOutputSchemaSchema } from './structured-output';
import { outputSchemaProblem } from './output-schema-check';

/**
 * The session workflow's interface: its input, Updates and Queries. The client imports the
 * same schemas, so bad input is rejected before anything reaches history, and the workflow
 * validates again because a workflow is a trust boundary of its own.
 */

export const SESSION_WORKFLOW = 'agentSession';

/**
 * The issues a refusal lists, and the characters of each: a refusal is one line a person
 * reads. Without a cap a list of a million wrong entries (2 MB of input) would be refused
 * with a message of tens of MB, which no workflow task can send; and some messages quote
 * what was sent (an unknown key, a tool name).
 */
const LISTED_ISSUES = 5;
const ISSUE_CHARS = 200;

/** One readable line naming each bad field, the first few of them: what an Update's caller sees when its validator rejects. */
export function describeIssues(error: z.ZodError): string {
  // An unknown key first: it is often a misspelt one, which explains the field said missing.
  const issues = error.issues.flatMap(explained).sort((a, b) => Number(b.code === 'unrecognized_keys') - Number(a.code === 'unrecognized_keys'));
  const listed = issues.slice(0, LISTED_ISSUES).map((i) => clip(`${i.path.length > 0 ? `${i.path.join('.')}: ` : ''}${i.message}`));
  return issues.length > LISTED_ISSUES ? `${listed.join('; ')}; and ${issues.length - LISTED_ISSUES} more` : listed.join('; ');
}

type Issue = z.ZodError['issues'][number];

/**
 * A union's own refusal says only "Invalid input". When exactly one alternative took the
 * value for its kind (an object, a number) and refused only what is in it or its range (a
 * retry policy with `maxRetries: 0.5` or an unknown key, beside `'default'`), that
 * alternative's issues say what is wrong, and name the field.
 */
const OF_ANOTHER_KIND = new Set(['invalid_type', 'invalid_value', 'invalid_union']);
function explained(issue: Issue): Issue[] {
  if (issue.code !== 'invalid_union') return [issue];
  const reached = issue.errors.filter((alternative) => alternative.length > 0 && !alternative.some((i) => i.path.length === 0 && OF_ANOTHER_KIND.has(i.code)));
  const [only] = reached;
  if (reached.length !== 1 || only === undefined) return [issue];
  return only.flatMap((i) => explained({ ...i, path: [...issue.path, ...i.path] }));
}

const clip = (line: string) => {
  const flat = line.replace(/[\r\n]+/g, ' ');
  return flat.length > ISSUE_CHARS ? `${flat.slice(0, ISSUE_CHARS - 1)}…` : flat;
};

/** Parses at a trust boundary, throwing an Error whose message names every bad field. */
export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new Error(`invalid ${what}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

export const TurnStatusSchema = z.enum(['completed', 'failed', 'cancelled']);
export type TurnStatus = z.infer<typeof TurnStatusSchema>;

export const TurnOutcomeSchema = z.object({
  turn: z.number().int().positive(),
  status: TurnStatusSchema,
  /** `handoff`: the turn handed the conversation over (contracts/handoffs.ts), to `handedOffTo`. */
  reason: z.enum(['answered', 'step_limit', 'handoff']).optional(),
  failure: FailureSummarySchema.optional(),
  /** A turn that ended `handoff`: the session that has the conversation now, and the turn in which it answers this message. */
  handedOffTo: HandedOffToSchema.optional(),
  /** A turn with an output schema that completed `answered`: the answer's value, valid against it (contracts/structured-output.ts). */
  output: z.unknown().optional(),
});
export type TurnOutcome = z.infer<typeof TurnOutcomeSchema>;

/**
 * Names a session's input lists (tools, MCP servers, approval patterns): far more than there
 * are tools to name, and few enough that a list of wrong entries is refused in
 * milliseconds, since zod makes an issue of every bad entry.
 */
const MAX_NAMES = 1_000;
const names = <T extends z.ZodType>(entry: T) => z.array(entry).max(MAX_NAMES, { error: `must list at most ${MAX_NAMES} names` });

/** A `tools/listed` event's content, carried to a run (or a fork) whose log leaves it out. */
const ToolsListedSchema = z.object({ turn: z.number().int().nonnegative(), ...McpToolListSchema.shape, custom: CustomToolOffersSchema.optional(), agents: SubAgentOffersSchema.optional() });

export const SessionInputSchema = z
  .object({
    model: ModelRefSchema,
    /**
     * Models a step goes to, in order, when its call to the model before fails on an
     * overload, a 5xx or the network (docs/fallback.md); none when absent.
     */
    fallbacks: z.array(ModelRefSchema).min(1, { error: 'must name at least one model' }).max(MAX_FALLBACKS, { error: `must name at most ${MAX_FALLBACKS} models` }).optional(),
    /** With fallbacks: how long a model may be failing before a call goes to the next (SESSION_LIMITS). */
    fallbackAfterMs: boundedInt('fallbackAfterMs').optional(),
    /** With fallbacks: back to the first model this long after a switch; absent: at the next turn. */
    fallbackReturnAfterMs: boundedInt('fallbackReturnAfterMs').optional(),
    /** Under the fleet limits, interactive sessions' calls are granted before batch ones'; absent: interactive. */
    priority: SessionPrioritySchema.optional(),
    system: z.string().max(100_000, { error: 'must be at most 100000 characters' }).optional(),
    /** Absent: the default ladder. `null`: one attempt per LLM call, nothing else changed. */
    retryPolicy: SessionRetryPolicySchema.optional(),
    /** Steps one turn may take before it stops with reason `step_limit`: a guard against runaway loops (see SESSION_LIMITS). */
    maxSteps: boundedInt('maxSteps').default(SESSION_LIMITS.maxSteps.default),
    /** Read-only tool calls that may run at once. */
    toolConcurrency: boundedInt('toolConcurrency').default(SESSION_LIMITS.toolConcurrency.default),
    /** Output tokens of one LLM call (why this default: SESSION_LIMITS). */
    maxTokens: boundedInt('maxTokens').default(SESSION_LIMITS.maxTokens.default),
    /** How hard the model may think before it answers: `off`, `low`, `medium`, `high` or a thinking budget in tokens. */
    reasoning: ReasoningSchema.default('off'),
    /** Prompt caching: cache breakpoints (Anthropic) and a cache key (OpenAI). On unless turned off. */
    promptCache: z.boolean().default(true),
    /** With no message and no turn for this long, the session ends by itself. */
    idleTimeoutMs: boundedInt('idleTimeoutMs').default(SESSION_LIMITS.idleTimeoutMs.default),
    /** Per-tool startToClose overrides in ms, for tools slower (or stricter) here than their defaults. */
    toolTimeouts: ToolTimeoutsSchema.default({}),
    /** Built-in tools this session may use; all of them when absent. */
    tools: names(ToolNameSchema).optional(),
    /** MCP servers of the worker's AGENT_MCP_CONFIG whose tools this session is offered; none when absent. */
    mcp: names(McpServerNameSchema).optional(),
    /** Custom tools of the worker (`defineTool`, docs/tools.md#your-own-tools) this session is offered; none when absent. */
    customTools: names(CustomToolNameSchema).optional(),
    /** Side-effecting tools (or `*`, or a prefix such as `mcp__fs__*`) whose calls wait for a human decision. */
    approvalRequired: names(z.string().min(1)).default([]),
    approvalTimeoutMs: boundedInt('approvalTimeoutMs').default(SESSION_LIMITS.approvalTimeoutMs.default),
    /**
     * Continue-as-new after this many history events, at the first moment no turn runs.
     * Without it the session continues as new when Temporal suggests it, and from revision 2
     * also once a run passes REPLAY_BOUND_EVENTS, if its log can be carried without a
     * compaction (workflows/continue-as-new.ts).
     */
    continueAsNewAfterEvents: boundedInt('continueAsNewAfterEvents').optional(),
    /**
     * The JSON Schema every turn's answer must match (structured output); a message's own
     * wins. Free text when absent. Checked in full for a new session (below); a run that
     * continues one carries the schema it was accepted with.
     */
    outputSchema: RecordedOutputSchemaSchema.optional(),
    /** Repair requests a turn may make after an answer that does not match its schema; then it fails `output_invalid`. */
    outputRetries: OutputRetriesSchema.default(OUTPUT_RETRIES.default),
    /** Spending limits checked before each LLM call (workflows/budget-guard.ts); none when absent. */
    budgetUsd: BudgetSchema.shape.usd,
    budgetTokens: BudgetSchema.shape.tokens,
    /** The share of a limit at which a turn pauses for a human (`approve <id> budget`). */
    budgetWarn: BudgetSchema.shape.warnAt,
    /** A turn's wall-clock limit in ms: then it is cancelled, its calls answered, and it fails `turn_timeout` (workflows/turn-guards.ts). */
    turnTimeoutMs: TurnTimeoutSchema.optional(),
    /** Identical tool calls in a row the model may make in a turn; the next one is answered with an error instead of run. */
    maxRepeats: MaxRepeatsSchema.optional(),
    /** The model's context window in tokens; absent: the model's entry in MODEL_WINDOWS, and no compaction for a model without one. */
    contextWindow: boundedInt('contextWindow').optional(),
    /** The share of the context window at which the session compacts before the next LLM call (workflows/compaction.ts). */
    compactAt: CompactAtSchema.default(COMPACT_AT.default),
    /** Tool results above 4 KiB of turns more than this many back are sent as one line (the log keeps them); none cleared when absent. */
    clearToolResultsAfter: boundedInt('clearToolResultsAfter').optional(),
    /**
     * The worker's agent (defineAgent) this session runs as, resolved by the worker before
     * the start (client/agents.ts): its settings apply under every one this input gives
     * (withAgentSettings), and the model may come from it alone.
     */
    agent: AgentRecordSchema.optional(),
    /**
     * The worker's agents (defineAgent) this session offers its model as tools, `agent__<name>`
     * (docs/sub-agents.md): a call runs the named agent as a child session; none when absent.
     */
    agents: names(AgentNameSchema).optional(),
    /** How deep a tree of agents under this session may go (contracts/sub-agents.ts AGENT_DEPTH); a child carries its root's. */
    maxAgentDepth: z.number().int().min(AGENT_DEPTH.min).max(AGENT_DEPTH.max).optional(),
    /** Set by a parent session only: this session is a sub-agent's, started by that call (contracts/sub-agents.ts). */
    parent: SubAgentParentSchema.optional(),
    /**
     * The worker's agents this session may hand the conversation over to, offered as tools
     * `handoff__<name>` (contracts/handoffs.ts, docs/sub-agents.md); none when absent.
     */
    handoffs: names(AgentNameSchema).optional(),
    /** Set by a session that handed over only: this session takes its conversation on, answering `text` first (contracts/handoffs.ts). */
    handoff: HandoffSchema.optional(),
    /**
     * Which commands the session's runs issue (contracts/session-revision.ts): set by the
     * client at the start, carried across continue-as-new; absent, the first revision's.
     */
    revision: SessionRevisionSchema.optional(),
    /**
     * The state an earlier run of this session carried over when it continued as new. Its
     * schema, like the fork's, is built on first use (see messages.ts): a new session has neither.
     */
    continued: z
      .lazy(() =>
        z.object({
          events: SessionLogSchema,
          retryPolicy: z.union([z.literal('default'), SessionRetryPolicySchema]),
          turnsRun: z.number().int().nonnegative(),
          runs: z.number().int().positive(),
          /** The budget as `setBudget` last left it; absent: the input's. */
          budget: BudgetSchema.optional(),
          /**
           * The counts of the whole session so far. `events` holds only the log's tail (the
           * events after the last compaction's cut), so these cannot be counted from it.
           * Absent in runs continued before compaction: those carried the whole log.
           */
          stepsTaken: z.number().int().nonnegative().optional(),
          spend: SpendSchema.optional(),
          usage: UsageSchema.optional(),
          nextTurn: z.number().int().positive().optional(),
          /** The latest turns' outcomes, which `awaitTurn` may still be asked for. */
          outcomes: z.array(TurnOutcomeSchema).max(MAX_EVENT_LIST_ENTRIES).optional(),
          /** The latest MCP tool list when it fell before the tail: the next run records it again first. */
          toolsListed: ToolsListedSchema.optional(),
          /**
           * The fallback in force when the last run ended: its place in the chain
           * [model, ...fallbacks] and the workflow time of the switch. Absent: the first model.
           */
          modelInForce: z.object({ index: z.number().int().positive().max(MAX_FALLBACKS), since: z.number().nonnegative() }).strict().optional(),
        }),
      )
      .optional(),
    /** The log of the session this one was forked from, already cut; an open tail is repaired at start. */
    fork: z
      .lazy(() =>
        z.object({
          fromWorkflowId: z.string().min(1),
          atSeq: z.number().int().nonnegative().optional(),
          events: SessionLogSchema,
          /** What the source spent beyond `events` (after the cut, and what it carried itself), so a fork cannot reset a budget. */
          carriedSpend: SpendSchema.optional(),
          /**
           * The source's counts at the cut: `events` may hold only the tail after a compaction,
           * so these cannot be counted from it. Absent in forks from before: counted from `events`.
           */
          stepsTaken: z.number().int().nonnegative().optional(),
          usage: UsageSchema.optional(),
          /** The source's latest MCP tool list at the cut when it fell before `events`: the fork records it again first. */
          toolsListed: ToolsListedSchema.optional(),
        }),
      )
      .optional(),
  })
  .strict();
export type SessionInput = z.input<typeof SessionInputSchema>;

/**
 * What a session's run is started with, as the client and the workflow check it: the
 * fields above, and a new session's output schema checked in full (a run that continues a
 * session carries the schema it was accepted with, see `outputSchema`). Apart from
 * `SessionInputSchema` because zod cannot `omit` or `extend` a schema with refinements.
 */
export const SessionRunInputSchema = SessionInputSchema.superRefine((input, ctx) => {
  if (input.outputSchema === undefined || input.continued !== undefined) return;
  const problem = outputSchemaProblem(input.outputSchema);
  if (problem) ctx.addIssue({ code: 'custom', path: ['outputSchema'], message: problem });
});
export type SessionConfig = z.output<typeof SessionInputSchema>;

export const SendMessageSchema = z
  .object({
    text: z.string().trim().min(1, { message: 'a message must not be empty' }).max(200_000),
    /** The JSON Schema this turn's answer must match, in place of the session's `outputSchema`. */
    outputSchema: OutputSchemaSchema.optional(),
  })
  .strict();
export type SendMessage = z.infer<typeof SendMessageSchema>;


/** `awaitTurn`'s argument: a turn number, which the validator then checks the session has. */
export const AwaitTurnSchema = z.object({ turn: z.number({ error: 'must be a turn number' }).int({ error: 'must be a turn number' }).positive({ error: 'must be a turn number' }) }).strict();
export type AwaitTurn = z.infer<typeof AwaitTurnSchema>;

/** `default` restores the product default; `null` switches retries off. */
export const RetryPolicyUpdateSchema = z.union([z.literal('default'), SessionRetryPolicySchema]);
export type RetryPolicyUpdate = z.infer<typeof RetryPolicyUpdateSchema>;

export const ApprovalDecisionSchema = z
  .object({ callId: z.string().min(1), approved: z.boolean(), reason: z.string().max(2_000).optional() })
  .strict();
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;

export interface PendingApproval {
  turn: number;
  step: number;
  callId: string;
  name: string;
  input: Record<string, unknown>;
  deadline: number;
}

export interface SessionState {
  /** `failed`: idle, and its last turn did not complete (the same value as the AgentStatus search attribute). */
  status: 'idle' | 'running' | 'failed' | 'ended';
  /** The session's first model, the one each turn starts on (docs/fallback.md). */
  model: string;
  /** The fallback answering the session's calls now, when it is not `model`; absent from workers from before fallbacks. */
  modelInForce?: string;
  system?: string;
  turn: number;
  /** The step running now, or the last one. */
  step: number;
  stepsTaken: number;
  phase: 'idle' | 'llm' | 'tools' | 'approval';
  queued: number;
  retryPolicy: SessionRetryPolicy | 'default';
  pendingApprovals: PendingApproval[];
  /** The seq the next event gets: how many events the session has, all its runs together. */
  events: number;
  /** The seq of this run's first event; earlier ones are read from the run it continued from. */
  firstSeq: number;
  /** The run this one continued from (continue-as-new), whose log holds the events before `firstSeq`. */
  continuedFromRunId?: string;
  /** How many runs this session has had: it continues as new when its history grows long. */
  runs: number;
  /** The window the session compacts against (its `contextWindow`, or the model's in MODEL_WINDOWS); null: unknown, it never compacts. */
  contextWindow: number | null;
  /** The share of `contextWindow` at which it compacts. */
  compactAt: number;
  forkedFrom?: { workflowId: string; atSeq?: number };
  /** The agent the session runs as, with the settings it gave; absent for a session started without one. */
  agent?: AgentRecord;
  /** The settings this session runs with, defaults filled in. */
  settings: SessionSettings;
  /** What the session has spent so far, also in the runs and the source it carries on from. */
  spend: Spend;
  /**
   * The tokens of the session's own log, a fork's source's up to the cut included; unlike
   * `spend`, not what a source spent after the cut. Absent from workers from before it.
   */
  usage?: Required<Usage>;
  /** The limits in force now (`setBudget` changes them). */
  budget: Budget;
}

export interface SessionResult {
  turns: number;
  stepsTaken: number;
  /** `handoff`: it handed the conversation over to `handedOffTo` (contracts/handoffs.ts). */
  endedBy: 'request' | 'idle_timeout' | 'handoff';
  handedOffTo?: HandedOffTo;
  usage: Usage;
  spend: Spend;
  /** A sub-agent's session (its input's `parent`): its one turn's outcome and answer. */
  answer?: SubAgentAnswer;
}

/** Starts a turn with a user message; resolves when the turn ends and fails with the turn's own failure. */
export const sendUpdate = defineUpdate<TurnOutcome, [SendMessage]>('send');
/** Resolves when the given turn has ended, with the same outcome as `send`. */
export const awaitTurnUpdate = defineUpdate<TurnOutcome, [AwaitTurn]>('awaitTurn');
export const cancelTurnUpdate = defineUpdate<{ cancelled: boolean; turn?: number }, []>('cancelTurn');
export const setRetryPolicyUpdate = defineUpdate<SessionRetryPolicy, [RetryPolicyUpdate]>('setRetryPolicy');
export const decideApprovalUpdate = defineUpdate<{ applied: boolean }, [ApprovalDecision]>('decideApproval');
/** Lists the session's MCP servers' tools again and records the new list: calls from then on use it. */
export const refreshToolsUpdate = defineUpdate<McpToolList, []>('refreshTools');
/** Changes the session's budget; applies from the next LLM call on, also in a running turn. */
export const setBudgetUpdate = defineUpdate<Budget, [BudgetUpdate]>('setBudget');
/** Ends the session once no turn runs and none is queued. */
export const endUpdate = defineUpdate<void, []>('end');

/** One page of the log from `fromSeq` (default 0), at most `maxBytes` (default and cap LOG_PAGE_BYTES); see log-pages.ts. */
export const logQuery = defineQuery<SessionEvent[], [{ fromSeq?: number; maxBytes?: number }?]>('log');
export const stateQuery = defineQuery<SessionState>('state');
/**
 * What the session's compaction makes of the provider's reported usage, for a client to
 * say (workflows/context-compactor.ts). `implausibleUsage`: the last step's call reported
 * fewer than half the input tokens its request held by size, so compaction estimates
 * from the request's size. Empty for a session that never compacts (no window).
 */
export const contextQuery = defineQuery<{ implausibleUsage?: ImplausibleUsage }>('context');

/** The last LLM call's reported input against the size of the request it answered. */
export interface ImplausibleUsage {
  /** The seq of the call's `assistant` event. */
  seq: number;
  reportedInputTokens: number;
  /** That call's request by its size: characters / 4 of its system prompt, tool specs and conversation. */
  requestTokens: number;
}

export { FailureSummarySchema };
