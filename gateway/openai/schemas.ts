import { z } from '@hono/zod-openapi';

/**
 * The OpenAI Responses API's core, as the `openai` SDKs send and parse it: the request
 * this gateway accepts, and the objects it answers with. Field names and shapes are
 * OpenAI's own (snake_case), so any OpenAI client reads them; what the gateway does not
 * support is refused by the request schema, naming the field, rather than ignored.
 */

const INPUT_ERROR = 'must be a string, or a list of user messages with text content (input_text)';

const InputTextSchema = z.strictObject({ type: z.literal('input_text'), text: z.string() });

/** A user message: `{ role: 'user', content }`, `type: 'message'` optional as the SDK's EasyInputMessage has it. */
const InputMessageSchema = z.strictObject({
  type: z.literal('message').optional(),
  role: z.literal('user'),
  content: z.union([z.string(), z.array(InputTextSchema).min(1)]),
});

export const ResponseCreateSchema = z
  .strictObject({
    /** The agent the session runs as (`GET /v1/models` lists them). */
    model: z.string().min(1, { error: 'must name an agent' }),
    input: z.union([z.string(), z.array(InputMessageSchema).min(1)], { error: INPUT_ERROR }),
    /** Continues the session of that response with a new turn. */
    previous_response_id: z.string().min(1).nullable().optional(),
    stream: z.boolean().optional(),
    /** An agent's instructions are its system prompt: a request cannot replace them. */
    instructions: z.null({ error: "not supported: the agent's system prompt is its instructions" }).optional(),
    /** Every session is durable, so a response is always stored. */
    store: z.literal(true, { error: 'not supported: every session is stored' }).optional(),
  })
  .openapi('ResponseCreateRequest');
export type ResponseCreate = z.infer<typeof ResponseCreateSchema>;

const OutputTextSchema = z.object({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()).max(0) });

/** What the agent said in one step: the Responses API's assistant message item. */
export const OutputMessageSchema = z
  .object({
    type: z.literal('message'),
    id: z.string(),
    role: z.literal('assistant'),
    status: z.enum(['in_progress', 'completed', 'incomplete']),
    content: z.array(OutputTextSchema),
  })
  .openapi('ResponseOutputMessage');
export type OutputMessage = z.infer<typeof OutputMessageSchema>;

/**
 * A tool the agent ran itself, on its worker: the Responses API's `mcp_call`, its item for
 * a call the server ran (name, arguments, output), unlike `function_call`, which asks the
 * client to run it. `server_label` is the MCP server's name, or the agent's for its
 * built-in and custom tools.
 */
export const McpCallSchema = z
  .object({
    type: z.literal('mcp_call'),
    id: z.string(),
    server_label: z.string(),
    name: z.string(),
    /** The call's input, as JSON text. */
    arguments: z.string(),
    status: z.enum(['in_progress', 'completed', 'incomplete', 'failed']),
    output: z.string().nullable(),
    error: z.object({ type: z.literal('mcp_tool_execution_error'), content: z.string() }).nullable(),
  })
  .openapi('ResponseMcpCall');
export type McpCall = z.infer<typeof McpCallSchema>;

export const OutputItemSchema = z.discriminatedUnion('type', [OutputMessageSchema, McpCallSchema]);
export type OutputItem = z.infer<typeof OutputItemSchema>;

export const ResponseUsageSchema = z.object({
  input_tokens: z.number().int().nonnegative(),
  input_tokens_details: z.object({ cached_tokens: z.number().int().nonnegative() }),
  output_tokens: z.number().int().nonnegative(),
  output_tokens_details: z.object({ reasoning_tokens: z.number().int().nonnegative() }),
  total_tokens: z.number().int().nonnegative(),
});
export type ResponseUsage = z.infer<typeof ResponseUsageSchema>;

/** How the turn ended: `completed` answered, `failed` (its failure type in `error.code`), `incomplete` cut short. */
export const ResponseStatusSchema = z.enum(['in_progress', 'completed', 'failed', 'incomplete']);
export type ResponseStatus = z.infer<typeof ResponseStatusSchema>;

export const ResponseObjectSchema = z
  .object({
    id: z.string(),
    object: z.literal('response'),
    created_at: z.number().int(),
    completed_at: z.number().int().nullable(),
    status: ResponseStatusSchema,
    /** A failed turn's failure: `code` is its type from the failure catalogue (docs/failure-types.md). */
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    /** `max_steps`: the turn reached the session's maxSteps; `cancelled`: the turn was cancelled. */
    incomplete_details: z.object({ reason: z.enum(['max_steps', 'cancelled']) }).nullable(),
    instructions: z.null(),
    metadata: z.record(z.string(), z.string()),
    model: z.string(),
    output: z.array(OutputItemSchema),
    parallel_tool_calls: z.boolean(),
    previous_response_id: z.string().nullable(),
    store: z.literal(true),
    temperature: z.null(),
    tool_choice: z.literal('auto'),
    tools: z.array(z.unknown()).max(0),
    top_p: z.null(),
    usage: ResponseUsageSchema.nullable(),
  })
  .openapi('Response');
export type ResponseObject = z.infer<typeof ResponseObjectSchema>;

export const ModelObjectSchema = z
  .object({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() })
  .openapi('Model');

export const ModelListSchema = z.object({ object: z.literal('list'), data: z.array(ModelObjectSchema) }).openapi('ModelList');
