import { z } from '@hono/zod-openapi';
import { ApprovalDecisionSchema, SendMessageSchema, SessionInputSchema, TurnOutcomeSchema } from '../../contracts/api';
import { AgentNameSchema } from '../../contracts/agents/agent-record';
import { HandedOffToSchema } from '../../contracts/handoffs';
import { BudgetSchema, BudgetUpdateSchema } from '../../contracts/budget';
import { RetryPolicySchema, SessionRetryPolicySchema } from '../../contracts/retry-policy';
import { FailureSummarySchema, SessionEventSchema } from '../../contracts/session-log';
import { SpendSchema } from '../../contracts/spend';
import { ListStatusSchema } from '../../client/list-sessions';

/**
 * The HTTP shapes of the session routes, built from the contracts' own schemas: the API
 * refuses what the session would, with the same bounds and words, before anything starts.
 */

/** A session's settings field as the body gives it: optional, and without the session's default, so an agent's own setting is not overridden by it. */
function given<K extends keyof typeof SessionInputSchema.shape>(name: K) {
  const schema = SessionInputSchema.shape[name] as z.ZodType;
  const inner = schema instanceof z.ZodDefault || schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema;
  return inner.optional();
}

/** Settings a key limited to named agents may not give: they change what the agent is, or what it may do. */
export const AGENT_DEFINING_SETTINGS = ['model', 'fallbacks', 'system', 'tools', 'mcp', 'customTools', 'agents', 'handoffs', 'approvalRequired', 'approvalTimeoutMs'] as const;

export const SessionIdSchema = z.string().min(1).max(1_000).openapi({ param: { name: 'id', in: 'path' }, example: 'session-3f1c9a2e' });
export const SessionParamsSchema = z.object({ id: SessionIdSchema });

const BudgetBodySchema = z
  .object({ usd: BudgetSchema.shape.usd, tokens: BudgetSchema.shape.tokens, warn: BudgetSchema.shape.warnAt })
  .strict()
  .openapi('BudgetLimits', { description: 'Spending limits: USD, tokens (input + output), and the share of a limit at which a turn pauses for approval (callId `budget`).' });

export const CreateSessionSchema = z
  .object({
    agent: AgentNameSchema.optional().openapi({ description: "The worker's agent (defineAgent) to start; without one, the settings alone (a key with agents \"*\")." }),
    model: given('model'),
    fallbacks: given('fallbacks'),
    fallbackAfterMs: given('fallbackAfterMs'),
    fallbackReturnAfterMs: given('fallbackReturnAfterMs'),
    priority: given('priority'),
    system: given('system'),
    tools: given('tools'),
    mcp: given('mcp'),
    customTools: given('customTools'),
    agents: given('agents').openapi({ description: "The worker's agents the model may call as tools, `agent__<name>`, each call a child session (docs/sub-agents.md)." }),
    handoffs: given('handoffs').openapi({ description: "The worker's agents the model may hand the conversation over to, `handoff__<name>`; a message whose turn hands over is answered by the session it went to (docs/sub-agents.md)." }),
    maxAgentDepth: given('maxAgentDepth'),
    maxSteps: given('maxSteps'),
    maxTokens: given('maxTokens'),
    toolConcurrency: given('toolConcurrency'),
    reasoning: given('reasoning'),
    promptCache: given('promptCache'),
    idleTimeoutMs: given('idleTimeoutMs'),
    approvalRequired: given('approvalRequired'),
    approvalTimeoutMs: given('approvalTimeoutMs'),
    turnTimeoutMs: given('turnTimeoutMs'),
    maxRepeats: given('maxRepeats'),
    contextWindow: given('contextWindow'),
    compactAt: given('compactAt'),
    clearToolResultsAfter: given('clearToolResultsAfter'),
    continueAsNewAfterEvents: given('continueAsNewAfterEvents'),
    outputSchema: given('outputSchema'),
    outputRetries: given('outputRetries'),
    retryPolicy: given('retryPolicy'),
    budget: BudgetBodySchema.optional(),
    message: SendMessageSchema.shape.text.optional().openapi({ description: 'The first message, sent with the start in the same request; its turn is `turn`.' }),
  })
  .strict()
  .openapi('CreateSession');
export type CreateSession = z.infer<typeof CreateSessionSchema>;

export const SessionCreatedSchema = z
  .object({
    sessionId: z.string(),
    runId: z.string(),
    /** The session in the Temporal UI. */
    uiUrl: z.string(),
    /** The first message's turn, when one was sent. */
    turn: z.number().int().positive().optional(),
  })
  .openapi('SessionCreated');

export const ListQuerySchema = z.object({
  // The CLI's own schema words its refusal for --status; this one names the query field instead.
  status: z.enum(ListStatusSchema.options).optional(),
  agent: AgentNameSchema.optional(),
  parent: z.string().min(1).max(1_000).optional().openapi({ description: 'Only the sessions this session started: its sub-agents and the sessions it handed over to (docs/sub-agents.md).' }),
  limit: z.coerce.number().int().min(1).max(1_000).default(20),
});

export const SessionSummarySchema = z
  .object({
    sessionId: z.string(),
    runId: z.string(),
    status: z.string(),
    agent: z.string().nullable().optional(),
    model: z.string().nullable(),
    steps: z.number(),
    costUsd: z.number().nullable(),
    startTime: z.string(),
    closeTime: z.string().nullable(),
    uiUrl: z.string(),
  })
  .openapi('SessionSummary');

const PendingApprovalSchema = z.object({ turn: z.number(), step: z.number(), callId: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()), deadline: z.number() });

export const SessionStateSchema = z
  .object({
    sessionId: z.string(),
    runId: z.string(),
    status: z.string(),
    closedAt: z.string().optional(),
    endedBy: z.enum(['request', 'idle_timeout', 'handoff']).optional(),
    model: z.string().nullable(),
    modelInForce: z.string().optional().openapi({ description: 'The fallback answering the session now, when a step switched to one (docs/fallback.md); absent on the first model.' }),
    agent: z.string().optional(),
    turn: z.number().optional(),
    step: z.number().optional(),
    phase: z.enum(['idle', 'llm', 'tools', 'approval']).optional(),
    queued: z.number().optional(),
    stepsTaken: z.number().nullable(),
    retryPolicy: z.union([z.literal('default'), SessionRetryPolicySchema]).optional(),
    settings: z.record(z.string(), z.unknown()).optional(),
    changedSettings: z.array(z.string()).optional(),
    spend: SpendSchema.nullable(),
    budget: BudgetSchema.optional(),
    pendingApprovals: z.array(PendingApprovalSchema),
    unavailable: z.string().optional(),
    uiUrl: z.string(),
  })
  .openapi('SessionState');

/** The log's pages: at most this many events an answer. */
export const LOG_PAGE_LIMIT = 500;
export const LogQuerySchema = z.object({
  fromSeq: z.coerce.number().int().nonnegative().default(0),
  limit: z.coerce.number().int().min(1).max(LOG_PAGE_LIMIT).default(100),
});
export const LogPageSchema = z
  .object({
    events: z.array(SessionEventSchema),
    /** The `fromSeq` of the next page. A page with fewer than `limit` events reached the log's end, for now. */
    nextFromSeq: z.number().int().nonnegative(),
  })
  .openapi('LogPage');

export const SendSchema = z
  .object({
    text: SendMessageSchema.shape.text,
    outputSchema: SendMessageSchema.shape.outputSchema,
    /** Answer when the turn has ended, with its outcome and messages (200), instead of once the session accepted the message (202). */
    wait: z.boolean().default(false),
  })
  .strict()
  .openapi('SendMessage');

export const SentSchema = z.object({ turn: z.number().int().positive(), updateId: z.string() }).openapi('MessageAccepted');

export const TurnResultSchema = z
  .object({
    turn: z.number().int().positive().optional(),
    status: TurnOutcomeSchema.shape.status,
    reason: TurnOutcomeSchema.shape.reason,
    failure: FailureSummarySchema.optional(),
    output: z.unknown().optional(),
    /** The turn handed the conversation over: the session that has it now, where the next message goes. */
    handedOffTo: HandedOffToSchema.optional(),
    /** The session that answered this message, when the turn handed over (its log holds `messages`). */
    answeredBy: z.string().optional(),
    /** The turn's conversation: its user message, the assistant's messages and the tool results. */
    messages: z.array(z.record(z.string(), z.unknown())),
  })
  .openapi('TurnResult');

export const CancelledSchema = z
  .object({ cancelled: z.boolean(), turn: z.number().optional(), outcome: z.object({ status: TurnOutcomeSchema.shape.status, turn: z.number().optional() }).optional() })
  .openapi('CancelResult');

export const ApprovalParamsSchema = z.object({ id: SessionIdSchema, callId: ApprovalDecisionSchema.shape.callId.max(1_000).openapi({ param: { name: 'callId', in: 'path' }, example: 'toolu_01A' }) });
export const ApprovalBodySchema = z.object({ approved: ApprovalDecisionSchema.shape.approved, reason: ApprovalDecisionSchema.shape.reason }).strict().openapi('ApprovalDecision');
export const ApprovalResultSchema = z.object({ callId: z.string(), approved: z.boolean(), applied: z.boolean() }).openapi('ApprovalResult');

export const BudgetUpdateBodySchema = z
  .object({ usd: BudgetUpdateSchema.shape.usd, tokens: BudgetUpdateSchema.shape.tokens, warn: BudgetUpdateSchema.shape.warnAt })
  .strict()
  .openapi('BudgetUpdate', { description: 'A number sets a limit, null removes it, an absent field leaves it.' });
// A copy: zod-openapi gives `.openapi()` only to schemas made after it loaded, and the contracts' are made before.
export const BudgetResultSchema = BudgetSchema.extend({}).openapi('Budget');

const LADDER = RetryPolicySchema.shape;
/**
 * `{"policy":"off"}` (one attempt per call), `{"policy":"default"}`, or the ladder's fields
 * to change over the default ladder, as the CLI's `retry-policy` reads its argument.
 */
export const RetryPolicyBodySchema = z
  .object({
    policy: z.enum(['off', 'default']).optional(),
    maxRetries: LADDER.maxRetries.optional(),
    baseDelayMs: LADDER.baseDelayMs.optional(),
    maxDelayMs: LADDER.maxDelayMs.optional(),
    budgetMs: LADDER.budgetMs.optional(),
    maxServerWaitMs: LADDER.maxServerWaitMs.optional(),
  })
  .strict()
  .refine((body) => body.policy === undefined || Object.keys(body).length === 1, { error: 'off and default take no ladder fields beside them', path: ['policy'] })
  .openapi('RetryPolicyUpdate');
export const RetryPolicyResultSchema = z.object({ retryPolicy: SessionRetryPolicySchema }).openapi('RetryPolicyInForce');

export const ForkBodySchema = z.object({ atSeq: z.number().int().nonnegative().optional() }).strict().openapi('Fork');

export const EndedSchema = z
  .object({ ending: z.literal(true), waitingFor: z.object({ turn: z.number(), queued: z.number() }).optional() })
  .openapi('EndRequested');

export const AgentSchema = z.object({ name: z.string(), description: z.string().optional(), model: z.string() }).openapi('Agent');
export const AgentsSchema = z.object({ agents: z.array(AgentSchema) }).openapi('Agents');
