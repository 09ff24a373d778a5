import { defineSignal } from '@temporalio/workflow';
import { z } from 'zod';
import { AgentNameSchema, AgentRecordSchema } from './agents/agent-record';
import { MAX_EVENT_LIST_ENTRIES } from './messages';
import { SpendSchema, type Spend } from './spend';
import { OutputSchemaSchema, RecordedOutputSchemaSchema } from './structured-output';
import { positionIdempotencyKey, type CallPosition } from './tools/idempotency-key';
import type { TurnOutcome } from './api';

/**
 * Agents that call agents (docs/sub-agents.md). A session whose input names `agents` offers
 * each of them to its model as a tool, `agent__<name>`. A call of one starts that agent as a
 * child session workflow with an id derived from the call's position, which runs the call's
 * task as its one turn and then ends; the parent's tool result is the child's answer (or its
 * typed output), with what it spent. The child has its own history, UI page and retries; the
 * parent keeps every guarantee it has for a tool call (compensation, cancellation, budget).
 */

/** A sub-agent's tool name: the prefix keeps it apart from the built-in, MCP and custom tools. */
export const AGENT_TOOL_PREFIX = 'agent__';
export const agentToolName = (agent: string) => `${AGENT_TOOL_PREFIX}${agent}`;
/** The agent a tool name calls, or undefined when it is not a sub-agent's tool. */
export const agentOfToolName = (tool: string) => (tool.startsWith(AGENT_TOOL_PREFIX) ? tool.slice(AGENT_TOOL_PREFIX.length) : undefined);

/** How deep a tree of agents may go (the root session is depth 0); a session's `maxAgentDepth` changes it. */
export const AGENT_DEPTH = { min: 1, max: 10, default: 3 } as const;

/** A task's characters: as much as a user message may hold. */
const MAX_TASK_CHARS = 200_000;

/**
 * What the model sends a sub-agent's tool: the task, and optionally the JSON Schema the
 * answer must match (its turn's output schema, as a message's `outputSchema` is). The
 * workflow parses a call with this; a refusal is an error result the model reads.
 */
export const SubAgentCallInputSchema = z
  .object({
    task: z.string().trim().min(1, { error: 'the task must not be empty' }).max(MAX_TASK_CHARS, { error: `the task must be at most ${MAX_TASK_CHARS} characters` }),
    output_schema: OutputSchemaSchema.optional(),
  })
  .strict();
export type SubAgentCallInput = z.infer<typeof SubAgentCallInputSchema>;

/** The JSON Schema of that input, as the provider request offers the tool. */
export const SUB_AGENT_INPUT_JSON_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    task: { type: 'string', description: 'What the agent is to do, with everything it needs to know: it sees nothing of this conversation.' },
    output_schema: { type: 'object', description: 'Optional: a JSON Schema its answer must match.' },
  },
  required: ['task'],
  additionalProperties: false,
};

/**
 * A sub-agent as the session records it (in `tools/listed`, its `agents` field): listed once
 * by the worker (`listSubAgents`), then read from the log only, as custom tools are. The
 * record is what the child session is started with, so a replay, a retry or a fork starts
 * the agent as it was when listed, whatever a later deploy defines under its name.
 */
export const SubAgentOfferSchema = z
  .object({
    /** The tool's name, `agent__<agent>` (`handoff__<agent>` for a handoff). */
    name: z.string().min(1),
    /** `handoff`: the tool hands the conversation over to the agent (contracts/handoffs.ts); absent: a sub-agent's. */
    kind: z.enum(['agent', 'handoff']).optional(),
    agent: AgentNameSchema,
    /** What the model reads of the tool: the agent's description, or a line naming it. */
    description: z.string(),
    record: AgentRecordSchema,
  })
  .strict();
export type SubAgentOffer = z.infer<typeof SubAgentOfferSchema>;
export const SubAgentOffersSchema = z.array(SubAgentOfferSchema).max(MAX_EVENT_LIST_ENTRIES);

/** The newest `tools/listed` among `events` with an agents' offer, if any. */
export function latestSubAgentOffer(events: readonly { type: string }[]): SubAgentOffer[] | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as { type: string; agents?: SubAgentOffer[] };
    if (e.type === 'tools/listed') return e.agents;
  }
  return undefined;
}

/**
 * A child session's `parent` input: where it was called from and what it was asked. Its
 * presence makes the session a sub-agent's: it runs `task` as turn 1 at once, ends when
 * that turn ends, and returns the turn's answer in its result (`SessionResult.answer`).
 */
export const SubAgentParentSchema = z
  .object({
    workflowId: z.string().min(1),
    /** The parent's call that started this child, by its position in the parent's session. */
    turn: z.number().int().positive(),
    step: z.number().int().positive(),
    callId: z.string().min(1),
    /** The agents from the root session down to the parent (a session without an agent is `session`): a call of one of them is a cycle. */
    lineage: z.array(z.string().min(1)).min(1).max(AGENT_DEPTH.max + 1),
    /** This child's depth (the root is 0); a call that would go past `maxDepth` is refused. */
    depth: z.number().int().min(1).max(AGENT_DEPTH.max),
    maxDepth: z.number().int().min(AGENT_DEPTH.min).max(AGENT_DEPTH.max),
    task: SubAgentCallInputSchema.shape.task,
    /** The answer's JSON Schema the call asked for; the agent's own output schema applies when absent. */
    outputSchema: RecordedOutputSchemaSchema.optional(),
  })
  .strict();
export type SubAgentParent = z.infer<typeof SubAgentParentSchema>;

/** The lineage's name for a session started without an agent. */
export const NO_AGENT_LINEAGE_NAME = 'session';

/**
 * The child's workflow id: the same on every replay and retry of the parent's call, so a
 * parent whose worker died re-attaches to the child it started and never starts a second
 * one; readable in the UI (the parent's id, the agent, the call's turn and step) and unique
 * per call (the position's key, as the provider's call id is unique only within a message).
 */
export function subAgentWorkflowId(parentWorkflowId: string, agent: string, position: { turn: number; step: number; key: string }): string {
  return `${parentWorkflowId}/agent/${agent}/${position.turn}.${position.step}-${position.key}`;
}

/** Hex digits of a call's position key in a child's id (and a handoff's): unique per call, short enough to read in the UI. */
const POSITION_KEY_DIGITS = 12;

/** The `key` of a child's id (and of a handoff's, contracts/handoffs.ts): the first hex digits of the call's position idempotency key, the same on every replay. */
export function callPositionKey(workflowId: string, position: CallPosition): string {
  const prefix = 'agent-';
  return positionIdempotencyKey(workflowId, position).slice(prefix.length, prefix.length + POSITION_KEY_DIGITS);
}

/**
 * What a sub-agent session answers when it ends (`SessionResult.answer`): its turn's
 * outcome, the text of its last answer and everything it spent (its own children's too).
 */
export interface SubAgentAnswer {
  outcome: TurnOutcome;
  text: string;
  spend: Spend;
}

/**
 * A child's spend so far, signalled to its parent after each of its LLM calls (the figure is
 * the child's whole spend, so a signal lost or reordered is made good by the next one and by
 * the final answer), so the parent's budget and status count it live. It names the call and
 * the child, so the parent counts it only for the child it started for that call.
 */
export const SubAgentSpendSchema = z
  .object({
    callId: z.string().min(1),
    /** The child's own id: a signal from anything but the call's running child (a stray, an older child) is ignored. */
    workflowId: z.string().min(1),
    spend: SpendSchema,
  })
  .strict();
export type SubAgentSpend = z.infer<typeof SubAgentSpendSchema>;
export const subAgentSpendSignal = defineSignal<[SubAgentSpend]>('subAgentSpend');

export interface ListSubAgentsRequest {
  names: string[];
  /** The agents offered as handoffs (contracts/handoffs.ts); absent: none. */
  handoffs?: string[];
}

/** The activity that lists a session's sub-agents, for `proxyActivities` in the workflow. */
export interface SubAgentActivities {
  /** The worker's agents by these names as offers; a name it does not serve fails the listing (`unknown_agent`, never retried). */
  listSubAgents(request: ListSubAgentsRequest): Promise<SubAgentOffer[]>;
}
