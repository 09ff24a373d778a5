import { z } from 'zod';
import { AgentNameSchema } from './agents/agent-record';
import { RecordedOutputSchemaSchema } from './structured-output';
import { AGENT_DEPTH } from './sub-agents';

/**
 * The handoff (docs/sub-agents.md#handing-the-conversation-over): a session whose input names
 * `handoffs` offers each of those agents to its model as a tool, `handoff__<name>`. A call of
 * one starts that agent as a session of its own, given this session's log up to the turn
 * running (as a fork is) and the user's message of that turn as its first turn; from then on
 * that session has the conversation, and this one records where it went and ends.
 */

/** A handoff's tool name: the prefix keeps it apart from the sub-agents' and every other tool. */
export const HANDOFF_TOOL_PREFIX = 'handoff__';
export const handoffToolName = (agent: string) => `${HANDOFF_TOOL_PREFIX}${agent}`;

/** A reason's characters: a line or two the next agent and the operator read, not a task. */
const MAX_REASON_CHARS = 2_000;

/** What the model sends a handoff's tool: why it hands over, optionally. */
export const HandoffCallInputSchema = z
  .object({ reason: z.string().trim().min(1, { error: 'the reason must not be empty' }).max(MAX_REASON_CHARS, { error: `the reason must be at most ${MAX_REASON_CHARS} characters` }).optional() })
  .strict();
export type HandoffCallInput = z.infer<typeof HandoffCallInputSchema>;

/** The JSON Schema of that input, as the provider request offers the tool. */
export const HANDOFF_INPUT_JSON_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: { reason: { type: 'string', description: 'Optional: why this agent should take the conversation over.' } },
  additionalProperties: false,
};

/** A user message's characters, as `send` takes them. */
const MAX_TEXT_CHARS = 200_000;

/**
 * A handed-over session's `handoff` input: where the conversation came from and the message
 * it answers first. Its presence makes the session queue `text` as its turn `turn` (the
 * number the message had in the session it came from) at once, then go on as any session.
 */
export const HandoffSchema = z
  .object({
    fromWorkflowId: z.string().min(1),
    /** The agent the conversation came from; `session` for a session started without one. */
    fromAgent: z.string().min(1),
    /**
     * The agents the conversation has been with before this session, in order, the last
     * `fromAgent`: a handoff back to one of them, or past the limit of handoffs, is refused
     * (workflows/handoff.ts). Absent in a handoff recorded before chains were: `[fromAgent]`.
     */
    chain: z.array(z.string().min(1)).min(1).max(AGENT_DEPTH.max + 1).optional(),
    reason: HandoffCallInputSchema.shape.reason,
    /** The user's message of the turn that handed over, which this session answers as its first turn. */
    turn: z.number().int().positive(),
    text: z.string().min(1).max(MAX_TEXT_CHARS),
    /** That message's own output schema, when it gave one. */
    outputSchema: RecordedOutputSchemaSchema.optional(),
  })
  .strict();
export type Handoff = z.infer<typeof HandoffSchema>;

/** Where a session's conversation went (`session/handed-off`, the turn's outcome, the session's result). */
export const HandedOffToSchema = z.object({ workflowId: z.string().min(1), agent: AgentNameSchema, turn: z.number().int().positive() }).strict();
export type HandedOffTo = z.infer<typeof HandedOffToSchema>;

/**
 * The id of the session a handoff starts: the same on every replay of the call, so a worker
 * that died after the start attaches to it and never starts a second; readable in the UI.
 */
export function handoffWorkflowId(fromWorkflowId: string, agent: string, position: { turn: number; step: number; key: string }): string {
  return `${fromWorkflowId}/handoff/${agent}/${position.turn}.${position.step}-${position.key}`;
}

/** What a session that handed over answers a message sent to it: the one line naming where the conversation is now. */
export const handedOffRefusal = (to: Pick<HandedOffTo, 'workflowId' | 'agent'>) => `this session handed the conversation to ${to.agent}: send to session ${to.workflowId}`;
