import type { z } from 'zod';
import { describeIssues, SendMessageSchema, type SendMessage } from '../contracts/api';
import type { AgentDefinition } from '../contracts/agents/agent-definition';
import type { OutputSchema } from '../contracts/structured-output';
import { isZodSchema, OutputSchemaConversionError, outputSchemaOfZod } from '../contracts/zod-output-schema';
import { ConfigError } from '../config/config-error';

/**
 * What one message's answer must be (docs/structured-output.md), for `send` and
 * `sendAndWait`: the schema the message carries, and the zod schema its value is typed by.
 */
export interface MessageOptions<S extends z.ZodType = z.ZodType> {
  /**
   * The JSON Schema this turn's answer must match, in place of the session's own; or a zod
   * object schema, sent as its JSON Schema, which also types the value `sendAndWait`
   * returns. Absent: the session's schema, else free text.
   */
  outputSchema?: OutputSchema | S;
  /**
   * The agent the session runs as (defineAgent), when its `output` should type the value:
   * nothing more is sent, as the session has the agent's schema already.
   */
  agent?: AgentDefinition<S>;
}

/** A value that passed the session's JSON Schema and not the zod schema it was typed by: a refinement JSON Schema cannot say. */
export class OutputTypeError extends Error {
  override name = 'OutputTypeError';
}

/** The `send` Update's argument, checked here: a refusal is the client's one line, not a rejected Update. */
export function messageOf(text: string, options: Pick<MessageOptions, 'outputSchema'> = {}): SendMessage {
  const schema = options.outputSchema === undefined ? {} : { outputSchema: jsonSchemaOf(options.outputSchema) };
  const message = SendMessageSchema.safeParse({ text, ...schema });
  if (message.success) return message.data;
  const [issue] = message.error.issues;
  // The text's refusal reads as it always has ("a message must not be empty"); the schema's names its field.
  throw new ConfigError(issue?.path[0] === 'text' ? issue.message : describeIssues(message.error));
}

function jsonSchemaOf(schema: OutputSchema | z.ZodType): unknown {
  if (!isZodSchema(schema)) return schema;
  try {
    return outputSchemaOfZod(schema);
  } catch (error) {
    if (error instanceof OutputSchemaConversionError) throw new ConfigError(`outputSchema: ${error.message}`);
    throw error;
  }
}

/**
 * The turn's value as the zod schema of the message or the agent reads it: the type the
 * caller asked for, checked, not asserted. Without one, the value as the session gave it.
 */
export function typedOutput<S extends z.ZodType>(options: MessageOptions<S>, output: unknown): z.output<S> | undefined {
  // A message's own JSON Schema wins over the agent's zod one: the answer was asked for in it.
  const schema = isZodSchema(options.outputSchema) ? options.outputSchema : options.outputSchema === undefined ? options.agent?.output : undefined;
  if (output === undefined || schema === undefined) return output as z.output<S> | undefined;
  const parsed = schema.safeParse(output);
  if (!parsed.success) throw new OutputTypeError(`the answer matched the session's JSON Schema but not the zod schema it is typed by: ${describeIssues(parsed.error)}`);
  return parsed.data;
}
