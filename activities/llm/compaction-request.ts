import type { AssistantMessage, LlmRequest, Message } from '../../contracts/messages';
import type { ProviderId } from '../../contracts/model-ref';
import { LlmError } from './llm-error';

/**
 * The compaction call (`purpose: 'compact'`, workflows/compaction.ts): the conversation up
 * to the cut, as any step would send it, then this one user message. The model's answer
 * replaces all of it in every later request, so it must keep what the work still needs.
 * The scripted LLM recognises a compaction request by this text at the start of its last
 * user message: changing it changes what the tests see.
 */
export const COMPACTION_INSTRUCTION =
  'Summarise the conversation so far. It is about to be replaced by your summary, and the work will go on from the summary alone: ' +
  'keep every fact, decision, file name, open task and tool result the work still needs, and say what was being done when it stopped. ' +
  'Leave out what no longer matters. Answer with the summary only, as plain text; call no tool.';

/**
 * The instruction messages compactionMessages made. A request is a compaction by its last
 * message being one of these very objects, not by its text: a user who sends the same
 * words keeps the tools for that step.
 */
const INSTRUCTIONS = new WeakSet<Message>();

/**
 * The messages of a compaction request. The system prompt and the tools stay in the
 * request as they are: the conversation holds tool calls, and Anthropic refuses a request
 * with tool blocks but no tools. Calling them is forbidden instead (forbidsToolCalls).
 */
export function compactionMessages(conversation: readonly Message[]): Message[] {
  const instruction: Message = { role: 'user', text: COMPACTION_INSTRUCTION };
  INSTRUCTIONS.add(instruction);
  return [...conversation, instruction];
}

/**
 * The request is a compaction's: each provider is told, in its own field, that the model
 * may call no tool for it (Anthropic `tool_choice: {type: "none"}`, OpenAI `"none"`,
 * Gemini `mode: NONE`), so the answer is text by contract rather than by the
 * instruction's words alone. A model that called a tool anyway used to leave a summary
 * with no text, and the user's turn failed.
 */
export function forbidsToolCalls(request: Pick<LlmRequest, 'messages'>): boolean {
  const last = request.messages.at(-1);
  return last !== undefined && INSTRUCTIONS.has(last);
}

/**
 * The answer of a compaction call as the session records it: its text is the summary.
 * Tool calls in it are dropped (with the provider data that refers to them), since no
 * tool runs for a summary and a compatible server may ignore the request's tool choice.
 * An answer without text is a failure, `unknown`, never retried: the same request would
 * most likely get the same answer, and an empty summary would silently drop the whole
 * conversation.
 */
export function compactionAnswer(message: AssistantMessage, provider: ProviderId): AssistantMessage {
  if (message.text.trim() === '') {
    throw new LlmError({ type: 'unknown', provider, detail: `the compaction call's answer has no text to use as the summary (stop reason ${message.stopReason})` });
  }
  const { providerData: _dropped, ...answer } = message;
  return { ...answer, toolCalls: [] };
}
