import { OUTPUT_TOOL_NAME } from '../../../contracts/structured-output';
import type { StreamPlan } from './dialect';

/**
 * Structured output as each provider's request asks for it and its answer carries it: the
 * request log records what a request asked for (RequestedOutput), and a `json` reply plays
 * in the form the request asked for: text for OpenAI and Gemini (whose JSON answers are
 * text), and for Anthropic a call of the `final_answer` tool when the request offers it.
 */
export interface RequestedOutput {
  /**
   * How the request asked: OpenAI `response_format: {type: "json_schema"}`, Gemini
   * `generationConfig.responseMimeType: "application/json"` with its response schema,
   * Anthropic a tool named `final_answer`.
   */
  mode: 'json_schema' | 'response_schema' | 'answer_tool';
  /** The schema as sent: `json_schema.schema`, `responseJsonSchema` (or `responseSchema`), the tool's `input_schema`. */
  schema: unknown;
  /** OpenAI `json_schema.strict`. */
  strict?: boolean;
  /** Anthropic: `tool_choice` forces a tool (`any`, or the answer tool by name). */
  forced?: boolean;
}

/** Anthropic's answer tool as the request offers it, and whether its tool choice forces a tool. */
export function anthropicAnswerTool(body: Record<string, unknown>): RequestedOutput | undefined {
  const tools = Array.isArray(body.tools) ? (body.tools as Array<Record<string, unknown>>) : [];
  const tool = tools.find((t) => t?.name === OUTPUT_TOOL_NAME);
  if (tool === undefined) return undefined;
  const choice = body.tool_choice as { type?: unknown; name?: unknown } | undefined;
  const forced = choice?.type === 'any' || (choice?.type === 'tool' && choice.name === OUTPUT_TOOL_NAME);
  return { mode: 'answer_tool', schema: tool.input_schema, forced };
}

/** A `json` reply's answer as a call of the answer tool: its JSON is the call's input, streamed in the pieces the text would have been. */
export function asAnswerCall(plan: StreamPlan): StreamPlan {
  // The text of a `json` reply is JSON.stringify of its value: it parses.
  const args: unknown = JSON.parse(plan.textPieces.join('') || 'null');
  return {
    ...plan,
    textPieces: [],
    calls: [{ name: OUTPUT_TOOL_NAME, argPieces: plan.textPieces, args }],
    stopReason: plan.stopReason === 'end_turn' ? 'tool_use' : plan.stopReason,
  };
}
