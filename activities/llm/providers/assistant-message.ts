import type { AssistantMessage, ProviderData, StopReason, ToolCall, Usage } from '../../../contracts/messages';

/**
 * Tool-call arguments as the model wrote them. A model can write anything, so anything
 * that is not a JSON object becomes `input: {}` with the raw text kept in `invalidJson`:
 * the tool result can then tell the model exactly what was wrong, instead of running the
 * tool on `{}` or failing the whole turn. An empty string is a call with no arguments
 * (OpenAI-compatible servers send it for parameterless tools), not an error.
 */
export function toolInputFromText(raw: string): Pick<ToolCall, 'input' | 'invalidJson'> {
  if (raw.trim() === '') return { input: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { input: {}, invalidJson: raw };
  }
  return isPlainObject(parsed) ? { input: parsed } : { input: {}, invalidJson: raw };
}

/**
 * Arguments a provider already sent as a JSON value (Gemini, Anthropic's block start). A
 * string there is argument text the model failed to make an object of: kept as it is,
 * not JSON-quoted a second time.
 */
export function toolInputFromValue(value: unknown): Pick<ToolCall, 'input' | 'invalidJson'> {
  if (value === undefined || value === null) return { input: {} };
  if (typeof value === 'string') return toolInputFromText(value);
  return isPlainObject(value) ? { input: value } : { input: {}, invalidJson: JSON.stringify(value) };
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The neutral message. A reply that carries tool calls is a `tool_use` turn whatever the
 * wire said: Gemini always says `STOP`, and older Ollama builds say `stop` beside
 * `tool_calls`, and the workflow must not read either as "the model is done".
 */
export function assistantMessage(parts: {
  text: string;
  toolCalls: ToolCall[];
  stopReason: StopReason;
  usage: Required<Usage>;
  /** The model the stream said answered; empty or absent when it named none. */
  responseModel?: string | undefined;
  providerData?: ProviderData;
}): AssistantMessage {
  const stopReason = parts.toolCalls.length > 0 && parts.stopReason === 'end_turn' ? 'tool_use' : parts.stopReason;
  return {
    role: 'assistant',
    text: parts.text,
    toolCalls: parts.toolCalls,
    stopReason,
    usage: parts.usage,
    ...(parts.responseModel ? { responseModel: parts.responseModel } : {}),
    ...(parts.providerData ? { providerData: parts.providerData } : {}),
  };
}

/** Token counts as the wire sends them: absent, null, or (from some proxies) a float. */
export function tokenCount(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.min(Math.round(v), MAX_TOKEN_COUNT) : 0;
}

/** Far above any context window: a larger count is garbage, and sums of counts must stay exact integers. */
const MAX_TOKEN_COUNT = 1e12;
