import type { StreamPlan } from './dialect';

/**
 * A reply to a request that forbids tool calls (Anthropic `tool_choice: {type: "none"}`,
 * OpenAI `tool_choice: "none"`, Gemini `toolConfig.functionCallingConfig.mode: "NONE"`):
 * as a provider does, the stream carries no tool call. A scripted call becomes text: the
 * reply's own text when it has some, else each call written out on its own line
 * (`read_file {"path":"x"}`), as a model told to call no tool may describe the call it
 * would have made. So a test can script a summariser that "calls a tool" and see what the
 * agent does with the answer a real provider would send.
 */
export function withoutToolCalls(plan: StreamPlan): StreamPlan {
  if (plan.calls.length === 0) return plan;
  const written = plan.calls.map((call) => `${call.name} ${call.argPieces.join('')}`);
  return {
    ...plan,
    textPieces: plan.textPieces.length > 0 ? plan.textPieces : written.map((line, i) => (i === 0 ? line : `\n${line}`)),
    calls: [],
    stopReason: plan.stopReason === 'tool_use' ? 'end_turn' : plan.stopReason,
  };
}
