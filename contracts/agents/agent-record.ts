import { z } from 'zod';

/**
 * An agent as a session carries it: the name it was started by and the settings the
 * worker's definition gave (contracts/agents/agent-definition.ts). Pure data, resolved on
 * the worker before the session starts and kept in the session's input, so every replay,
 * every run it continues into and every fork runs with the agent as it was then, whatever
 * a later deploy defines under that name.
 */

const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const agentNameMessage = "must be 1 to 64 letters, digits, '_' or '-', starting with a letter or digit";

export const AgentNameSchema = z.string({ error: agentNameMessage }).regex(AGENT_NAME, { error: agentNameMessage });

/**
 * The settings are checked where they are used: merged under the input's own, the whole
 * is parsed by the session's input schema, which refuses an unknown or bad one by name.
 */
export const AgentRecordSchema = z
  .object({
    name: AgentNameSchema,
    settings: z.record(z.string(), z.unknown()),
  })
  .strict();
export type AgentRecord = z.infer<typeof AgentRecordSchema>;

/**
 * What a session runs with: its agent's settings under the ones its input gives itself,
 * so a setting given per session wins. A key given as `undefined` gives nothing: it does
 * not take the agent's value away.
 */
export function withAgentSettings<T extends { agent?: AgentRecord | undefined }>(input: T): T {
  if (!input?.agent) return input;
  const given = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
  return { ...input.agent.settings, ...given } as T;
}
