import { z } from 'zod';

/**
 * The provider-neutral conversation. Adapters translate it to each wire format;
 * the workflow derives it from the session log and never keeps it beside the log.
 */

export const ToolCallSchema = z.object({
  /** The provider's call id (`toolu_…`, `call_…`); Gemini has none, so its adapter makes one. */
  id: z.string().min(1),
  name: z.string().min(1),
  /** The parsed arguments. `{}` when the model's JSON could not be parsed; see `invalidJson`. */
  input: z.record(z.string(), z.unknown()),
  /**
   * The raw argument text when it was not a JSON object. Kept so the tool result can
   * tell the model exactly what was wrong instead of running the tool on `{}`.
   */
  invalidJson: z.string().optional(),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

export const StopReasonSchema = z.enum(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'refusal', 'other']);
export type StopReason = z.infer<typeof StopReasonSchema>;

export const UsageSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
});
export type Usage = z.infer<typeof UsageSchema>;

export const AssistantMessageSchema = z.object({
  role: z.literal('assistant'),
  text: z.string(),
  toolCalls: z.array(ToolCallSchema),
  stopReason: StopReasonSchema,
  usage: UsageSchema,
});
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;

export const ToolResultCodeSchema = z.enum(['ok', 'error', 'TOOL_OUTCOME_UNKNOWN', 'TOOL_NOT_STARTED']);
export type ToolResultCode = z.infer<typeof ToolResultCodeSchema>;

export const UserMessageSchema = z.object({ role: z.literal('user'), text: z.string() });
export type UserMessage = z.infer<typeof UserMessageSchema>;

export const ToolResultMessageSchema = z.object({
  role: z.literal('tool'),
  toolCallId: z.string().min(1),
  name: z.string().min(1),
  code: ToolResultCodeSchema,
  content: z.string(),
});
export type ToolResultMessage = z.infer<typeof ToolResultMessageSchema>;

export const MessageSchema = z.discriminatedUnion('role', [
  UserMessageSchema,
  AssistantMessageSchema.omit({ usage: true, stopReason: true }),
  ToolResultMessageSchema,
]);
export type Message = z.infer<typeof MessageSchema>;

/** A tool as the model sees it: the JSON Schema is derived from the tool's zod schema. */
export const ToolSpecSchema = z.object({
  name: z.string().min(1),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
});
export type ToolSpec = z.infer<typeof ToolSpecSchema>;

export const LlmRequestSchema = z.object({
  /** The provider's own model name, without the `provider:` prefix. */
  model: z.string().min(1),
  system: z.string().optional(),
  messages: z.array(MessageSchema),
  tools: z.array(ToolSpecSchema),
  maxTokens: z.number().int().positive(),
});
export type LlmRequest = z.infer<typeof LlmRequestSchema>;
