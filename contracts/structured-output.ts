import { z } from 'zod';
import { outputSchemaProblem } from './output-schema-check';

/**
 * Structured output: a turn that must end in a JSON value of a given shape
 * (docs/structured-output.md). The shape is a JSON Schema, because that is what every
 * provider is sent and what a session's input can carry as data; an agent defined with a
 * zod schema is converted once, where it is defined. Pure data and pure functions: the
 * workflow sandbox imports it.
 */

/** The schema's JSON, at most: a shape, not a document. Larger ones are refused at the boundary. */
export const MAX_OUTPUT_SCHEMA_BYTES = 64 * 1024;

/**
 * A turn's value as its outcome carries it into the next run (continue-as-new), at most:
 * `awaitTurn` answers a larger one without it, and the log's `turn/end` keeps it whole.
 */
export const CARRIED_OUTPUT_BYTES = 4 * 1024;

/** Repair requests a turn may make after its answer failed the schema: `--output-retries`. */
export const OUTPUT_RETRIES = { min: 0, max: 10, default: 2 } as const;

/**
 * What the errors of one rejected answer are bounded to, in the log and in the repair
 * request: enough to fix the answer, bounded in history whatever the model wrote.
 */
export const OUTPUT_ERRORS = { max: 20, chars: 300 } as const;

/**
 * The name the answer goes by on the wire where a provider needs one: OpenAI's
 * `json_schema.name`, and Anthropic's forced final tool. Reserved: no tool may have it.
 */
export const OUTPUT_TOOL_NAME = 'final_answer';

const schemaMessage = 'must be a JSON Schema whose root is an object schema ({"type": "object", ...})';

/**
 * The shape of an output schema as it was recorded: a JSON Schema whose root describes an
 * object, within the size. What a session carries into its next run (continue-as-new) and
 * its log's `turn/start` events are read with this alone: they were checked in full when
 * they were given, and a worker whose checks have grown stricter since must not refuse a
 * session it accepted (nor run the check again on every carried turn).
 */
export const RecordedOutputSchemaSchema = z.record(z.string(), z.unknown(), { error: schemaMessage }).superRefine((schema, ctx) => {
  if (schema.type !== 'object') ctx.addIssue({ code: 'custom', message: schemaMessage });
  const bytes = JSON.stringify(schema).length;
  if (bytes > MAX_OUTPUT_SCHEMA_BYTES) ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_OUTPUT_SCHEMA_BYTES} bytes of JSON (it is ${bytes})` });
});

/**
 * A JSON Schema whose root describes an object: what every provider's strict mode and
 * Anthropic's tool input take, and that the workflow can validate answers against. Checked
 * in full where a schema is given (a message, a new session, an agent, a file).
 */
export const OutputSchemaSchema = RecordedOutputSchemaSchema.superRefine((schema, ctx) => {
  if (schema.type !== 'object' || JSON.stringify(schema).length > MAX_OUTPUT_SCHEMA_BYTES) return;
  // Refused here, where the session or message is given, rather than on its first answer.
  const problem = outputSchemaProblem(schema);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
export type OutputSchema = z.infer<typeof OutputSchemaSchema>;

const retriesMessage = `must be a whole number from ${OUTPUT_RETRIES.min} to ${OUTPUT_RETRIES.max}`;
export const OutputRetriesSchema = z
  .number({ error: retriesMessage })
  .int({ error: retriesMessage })
  .min(OUTPUT_RETRIES.min, { error: retriesMessage })
  .max(OUTPUT_RETRIES.max, { error: retriesMessage });

/**
 * What one turn must answer in, resolved when the turn starts (the message's schema, else
 * the session's) and recorded in its `turn/start` event: the LLM activity reads it from
 * there, so every attempt, replay and fork sends the schema the turn was started with.
 */
export const OutputSpecSchema = z.object({ schema: RecordedOutputSchemaSchema }).strict();
export type OutputSpec = z.infer<typeof OutputSpecSchema>;
